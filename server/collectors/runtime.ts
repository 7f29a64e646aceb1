/**
 * What a collector runs: the runtime its management mode implies, and the
 * version it reported, the `service.version` attribute of its OpAMP
 * AgentDescription, which the OpAMP channel keeps among the collector's tags
 * (opamp/identity.ts, collectorTags).
 */
import type { Runtime } from "../catalog/index.ts";
import type { Collector, ManagementMode } from "./collectors.ts";

/** The runtime a collector in each management mode runs. */
export const RUNTIME_OF: Record<ManagementMode, Runtime> = { opamp: "otelcol", "rcfg-remotecfg": "alloy" };

export const VERSION_TAG = "service.version";

/** The reported version, or null when the collector never said. */
export function reportedVersion(collector: Pick<Collector, "tags">): string | null {
  const version = collector.tags[VERSION_TAG]?.trim();
  return version ? version : null;
}
