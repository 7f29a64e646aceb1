/**
 * Host metrics (CPU, memory, disks, …). Runtime R has no otelcol hostmetrics
 * receiver: it scrapes its built-in node_exporter (`prometheus.exporter.unix`)
 * with `prometheus.scrape` into `otelcol.receiver.prometheus`, so metric
 * names there follow node_exporter (`node_cpu_seconds_total`), not
 * `system.cpu.time`.
 */
import { Type } from "@sinclair/typebox";
import { attr, block, ref } from "../../alloy-syntax.ts";
import { Closed, Interval, NoReferences, StringEnum } from "../../schemas.ts";
import { defineSource } from "../../types.ts";
import { alloyScrapeTiming, SCRAPE_INTERVAL_REFERENCE } from "../scrape.ts";
import { PROMETHEUS_RECEIVER_DELIVERY } from "../delivery.ts";
import { DELIVERY_UPSTREAM } from "./upstream.ts";
import { RUNTIME_NAMES } from "../../../../shared/vocabulary.ts";

/** Each hostmetrics scraper and the node_exporter collectors that cover it. */
const NODE_COLLECTORS = {
  cpu: ["cpu"],
  disk: ["diskstats"],
  filesystem: ["filesystem"],
  load: ["loadavg"],
  memory: ["meminfo"],
  network: ["netdev", "netstat"],
  paging: ["vmstat"],
  processes: ["processes"],
  system: ["stat", "time"],
} as const satisfies Record<string, readonly string[]>;

type Scraper = keyof typeof NODE_COLLECTORS;
const SCRAPERS = Object.keys(NODE_COLLECTORS) as Scraper[];

export const hostmetricsSource = defineSource({
  kind: "source",
  type: "hostmetrics",
  title: "Host metrics",
  description: "Collects CPU, memory, disk, filesystem, network and load metrics of the host.",
  signals: ["metrics"],
  delivery: {
    otelcol:
      "the hostmetrics receiver's metrics, named by the semantic conventions: system.cpu.time (attributes cpu, state), system.memory.usage, system.disk.io, system.filesystem.usage, system.network.io, system.cpu.load_average.1m, …",
    alloy:
      "node_exporter's series through otelcol.receiver.prometheus: node_cpu_seconds_total (labels cpu, mode), node_memory_MemAvailable_bytes, node_disk_read_bytes_total, node_filesystem_size_bytes, node_network_receive_bytes_total, node_load1, …",
    normalised: null,
    difference: `host metrics are the hostmetrics receiver's (semantic-convention names such as system.cpu.time with attribute state) on ${RUNTIME_NAMES.otelcol} but node_exporter's (node_cpu_seconds_total with label mode) on ${RUNTIME_NAMES.alloy}`,
    differsAs: "whole",
    upstream: [...DELIVERY_UPSTREAM, PROMETHEUS_RECEIVER_DELIVERY],
  },
  schema: Closed({
    // A Go time.Duration on both runtimes (hostmetrics' collection_interval, Alloy's prometheus.scrape).
    collection_interval: NoReferences(Interval({ grammars: ["go"], default: "60s", description: "How often to collect." }), SCRAPE_INTERVAL_REFERENCE),
    scrapers: Type.Array(NoReferences(StringEnum(SCRAPERS), "svc reads the scrapers to build the configuration"), {
      minItems: 1,
      uniqueItems: true,
      default: ["cpu", "memory", "disk", "filesystem", "network", "load"],
      description: "Which groups of metrics to collect.",
    }),
  }),
  otelcol(config) {
    const scrapers = Object.fromEntries(sorted(config.scrapers).map((s) => [s, {}]));
    return { type: "hostmetrics", config: { collection_interval: config.collection_interval, scrapers } };
  },
  alloy(config, label, output) {
    const collectors = [...new Set(sorted(config.scrapers).flatMap((s) => NODE_COLLECTORS[s]))];
    return [
      block("prometheus.exporter.unix", label, [attr("set_collectors", collectors)]),
      block("prometheus.scrape", label, [
        attr("targets", ref(`prometheus.exporter.unix.${label}.targets`)),
        attr("forward_to", [ref(`otelcol.receiver.prometheus.${label}.receiver`)]),
        ...alloyScrapeTiming(config.collection_interval),
      ]),
      block("otelcol.receiver.prometheus", label, [output]),
    ];
  },
});

function sorted(scrapers: readonly Scraper[]): Scraper[] {
  return [...scrapers].sort();
}
