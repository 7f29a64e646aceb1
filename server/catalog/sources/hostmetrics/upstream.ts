/** The hostmetrics source's upstream facts (upstream/types.ts): the collector's hostmetrics receiver and Alloy's prometheus.exporter.unix. */
import { alloyAt, attr, contrib, STRINGS } from "../../upstream/shared.ts";
import type { TypeUpstream } from "../../upstream/types.ts";

export const UPSTREAM: TypeUpstream = {
  otelcol: [
    {
      type: "hostmetrics",
      kind: "receiver",
      source: contrib("receiver/hostmetricsreceiver/config.go", "0eb23104cee99e8f06c865d2cd0784820a84bfa4"),
      // Each scraper is a key whose (empty) map takes that scraper's defaults.
      config: { collection_interval: "go-duration", scrapers: { map: { object: {} } } },
    },
  ],
  alloy: [
    {
      name: "prometheus.exporter.unix",
      stability: "generally-available",
      source: alloyAt("internal/component/prometheus/exporter/unix/config.go"),
      arguments: { set_collectors: attr(STRINGS) },
    },
  ],
};
