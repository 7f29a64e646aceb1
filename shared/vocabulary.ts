/**
 * The words for what a collector runs, how it is managed and which channel it
 * talks to, named once for the server, the agent and the UI. A leaf module: it
 * imports nothing, so any layer may import it.
 *
 * Prose says "Runtime O" for the OpenTelemetry Collector (YAML config, code
 * name `otelcol`) and "Runtime R" for Grafana Alloy (Alloy syntax, `alloy`).
 */

/** What a collector runs, which decides how its config is rendered. */
export const RUNTIMES = ["otelcol", "alloy"] as const;
export type Runtime = (typeof RUNTIMES)[number];

/**
 * How the server manages a collector: over OpAMP (the server pushes), or by
 * Alloy's `remotecfg` block polling the server (the collector pulls).
 */
export const MANAGEMENT_MODES = ["opamp", "rcfg-remotecfg"] as const;
export type ManagementMode = (typeof MANAGEMENT_MODES)[number];

/** How the UI names each management mode. */
export const MODE_NAMES: Record<ManagementMode, string> = { opamp: "OpAMP", "rcfg-remotecfg": "remotecfg" };

/** The control channels collectors contact (`/v1/opamp`, and remote config's Connect service). */
export type ControlChannel = "opamp" | "remotecfg";

/** The runtime a collector in each management mode runs. */
export const RUNTIME_OF: Record<ManagementMode, Runtime> = { opamp: "otelcol", "rcfg-remotecfg": "alloy" };

/** The control channel that serves a collector in each management mode. */
export const CHANNEL_OF: Record<ManagementMode, ControlChannel> = { opamp: "opamp", "rcfg-remotecfg": "remotecfg" };
