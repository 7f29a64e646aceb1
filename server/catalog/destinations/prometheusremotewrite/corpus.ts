/** Prometheus remote-write destination configs the conformance test renders (folder.ts). */
import { FROM_HOST, plain, SECRET } from "../../corpus-values.ts";
import type { CorpusConfig } from "../../folder.ts";

export const CORPUS: readonly CorpusConfig[] = [
  { endpoint: "http://mimir:9009/api/v1/push", headers: { "X-Scope-OrgID": plain("t"), Authorization: FROM_HOST, "X-Key": SECRET } },
];
