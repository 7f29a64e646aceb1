/** Host metrics source configs the conformance test renders (folder.ts). */
import type { CorpusConfig } from "../../folder.ts";

export const CORPUS: readonly CorpusConfig[] = [
  {},
  { collection_interval: "5s", scrapers: ["cpu", "disk", "filesystem", "load", "memory", "network", "paging", "processes", "system"] },
  { collection_interval: "1.5s" },
  { collection_interval: "10s" },
];
