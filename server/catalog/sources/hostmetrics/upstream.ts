/** The hostmetrics source's upstream facts (upstream/types.ts): the collector's hostmetrics receiver and Alloy's prometheus.exporter.unix. */
import { alloyAt, attr, contrib, STRINGS } from "../../upstream/shared.ts";
import type { TypeUpstream } from "../../upstream/types.ts";
import type { Upstream } from "../delivery.ts";

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

/** Where the parity table's facts about what each runtime delivers were read (delivery.ts); the prometheus receiver's are shared there. */
export const DELIVERY_UPSTREAM: readonly Upstream[] = [
  {
    repo: "open-telemetry/opentelemetry-collector-contrib",
    path: "receiver/hostmetricsreceiver/internal/scraper/cpuscraper/metadata.yaml",
    version: "read via code search, 2026-11 (v0.149.0 line: sem_conv_version 1.9.0)",
    fact: "system.cpu.time, unit s, cumulative monotonic double sum with attributes cpu and state (idle, interrupt, nice, softirq, steal, system, user, wait); the other scrapers name their metrics system.* the same way (system.memory.usage, system.disk.io, …).",
  },
  {
    repo: "grafana/alloy",
    path: "internal/component/prometheus/exporter/unix/config.go; go.mod",
    version: "v1.18.1 (same file at 66ebea856d)",
    fact: "prometheus.exporter.unix embeds node_exporter (github.com/prometheus/node_exporter v1.10.2, replaced by grafana/node_exporter 318b01780c89): series named by node_exporter, e.g. node_cpu_seconds_total with labels cpu and mode, node_memory_MemAvailable_bytes.",
  },
];
