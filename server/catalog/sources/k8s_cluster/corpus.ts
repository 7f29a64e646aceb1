/** Kubernetes cluster source configs the conformance test renders (folder.ts). */
import type { CorpusConfig } from "../../folder.ts";

export const CORPUS: readonly CorpusConfig[] = [
  {},
  { auth_type: "kubeConfig", collection_interval: "30s", node_conditions_to_report: ["Ready", "DiskPressure"], distribution: "openshift" },
];
