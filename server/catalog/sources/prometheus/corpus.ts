/** Prometheus source configs the conformance test renders (folder.ts). */
import type { CorpusConfig } from "../../folder.ts";

export const CORPUS: readonly CorpusConfig[] = [
  { targets: ["localhost:9100"] },
  { targets: ["a:9100", "b:9100"], scrape_interval: "5s", job_name: "node" },
  { targets: ["a:9100"], scrape_interval: "1h30m" },
  { targets: ["a:9100"], scrape_interval: "500ms" },
  { targets: ["a:9100"], scrape_interval: "9s999ms" },
];
