/** Loki destination configs the conformance test renders (folder.ts). */
import { FROM_HOST, plain, SECRET } from "../../corpus-values.ts";
import type { CorpusConfig } from "../../folder.ts";

export const CORPUS: readonly CorpusConfig[] = [
  { endpoint: "http://loki:3100", tenant_id: "t1", headers: { A: plain("b"), Authorization: SECRET, "X-Key": FROM_HOST } },
];
