/** Kubelet stats source configs the conformance test renders (folder.ts). */
import type { CorpusConfig } from "../../folder.ts";

export const CORPUS: readonly CorpusConfig[] = [
  {},
  { auth_type: "none", endpoint: "http://node-1:10255", insecure_skip_verify: true, collection_interval: "1m", metric_groups: ["volume"] },
];
