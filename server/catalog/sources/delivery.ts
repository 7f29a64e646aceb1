/**
 * What each runtime delivers to a pipeline's first processor for one source
 * type: the parity table, recorded next to each source (SourceType.delivery)
 * with where each fact comes from. Runtime O is the OpenTelemetry Collector
 * (otelcol-svc v0.149.0), Runtime R is Alloy (v1.18.1).
 *
 * A difference svc cannot normalise is never silent: a processor that reads
 * it is refused on Runtime R (render/parity.ts), and otherwise every render
 * for an Alloy collector names it — the publish plan, the pipeline preview
 * and route creation answer it as a warning (render/differences.ts).
 */
import { LOG_RECORD_SHAPES, RECORD_PARTS, UPSTREAM, type LogSourceType, type Upstream } from "./log-records.ts";
import { RUNTIME_NAMES } from "../../../shared/vocabulary.ts";

export type { Upstream };

export interface SourceDelivery {
  /** What Runtime O delivers. */
  otelcol: string;
  /** What Runtime R delivers after svc's mapping; null: Runtime R cannot run the source (refused on Alloy collectors). */
  alloy: string | null;
  /** What svc renders on Runtime R so that both deliver the same; null: nothing. */
  normalised: string | null;
  /** What still differs after that; null: both deliver the same. */
  difference: string | null;
  /**
   * How a processor's read meets the difference: "whole", any read of the
   * record or metric differs; "parts", only reads of the parts
   * log-records.ts LOG_RECORD_SHAPES marks as differing.
   */
  differsAs: "whole" | "parts" | null;
  upstream: readonly Upstream[];
}

/** How svc handles a source type's difference, as the table says it. */
export function handlingOf(delivery: SourceDelivery): string {
  if (delivery.alloy === null) return `${RUNTIME_NAMES.otelcol} only: refused on Alloy collectors`;
  if (delivery.difference === null) return delivery.normalised === null ? "same: nothing to do" : "normalised in the rendered Alloy config";
  return `shown before publish (publish plan, preview, route creation warn); a processor reading it is refused on ${RUNTIME_NAMES.alloy}`;
}

/** The UPSTREAM facts whose path names one of these components or files. */
export function upstreamAbout(...fragments: readonly string[]): Upstream[] {
  return UPSTREAM.filter((u) => fragments.some((f) => u.path.includes(f)));
}

/** A log source's delivery composed from its record shapes part by part. */
export function logDelivery(type: LogSourceType, normalised: string | null, upstream: readonly Upstream[]): SourceDelivery {
  const shapes = LOG_RECORD_SHAPES[type];
  const part = (side: "otelcol" | "alloy") => RECORD_PARTS.map((p) => `${p}: ${shapes[p][side]}`).join("; ");
  const differing = RECORD_PARTS.filter((p) => shapes[p].differs !== false);
  return {
    otelcol: part("otelcol"),
    alloy: part("alloy"),
    normalised,
    difference:
      differing.length === 0
        ? null
        : differing
            .map((p) => {
              const d = shapes[p].differs;
              return Array.isArray(d)
                ? `${p} ${d.join(", ")} only on ${RUNTIME_NAMES.otelcol}`
                : `${p} is ${shapes[p].otelcol} on ${RUNTIME_NAMES.otelcol} but ${shapes[p].alloy} on ${RUNTIME_NAMES.alloy}`;
            })
            .join("; "),
    differsAs: differing.length === 0 ? null : "parts",
    upstream,
  };
}

/** What the prometheus receiver delivers on both runtimes, for the prometheus and hostmetrics sources. */
export const PROMETHEUS_RECEIVER_DELIVERY: Upstream = {
  repo: "grafana/alloy",
  path: "internal/component/otelcol/receiver/prometheus/prometheus.go, internal/transaction.go",
  version: "v1.18.1 (prometheus.go the same at 66ebea856d)",
  fact: "otelcol.receiver.prometheus appends scraped series through its internal package, a copy of contrib's receiver/prometheusreceiver/internal (its package import comment names it): the translation the collector's prometheus receiver uses, so the same metric names, attributes and resource.",
};
