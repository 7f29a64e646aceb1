/** Kubernetes events source configs the conformance test renders (folder.ts). */
import type { CorpusConfig } from "../../folder.ts";

export const CORPUS: readonly CorpusConfig[] = [{}, { namespaces: ["default", "kube-system"] }];
