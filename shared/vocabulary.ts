/**
 * The words for what a collector runs, how it is managed and which channel it
 * talks to, named once for the server, the agent and the UI. A leaf module: it
 * imports nothing, so any layer may import it.
 *
 * The spec's "Runtime O" is the OpenTelemetry Collector (YAML config, code name
 * `otelcol`), its "Runtime R" Alloy (Alloy syntax, `alloy`). What a person reads
 * names each runtime by RUNTIME_NAMES only (test/vocabulary/runtime-names.test.ts);
 * the code names stay the wire values.
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

/** The control channels collectors contact (`/v1/opamp`, and remote config's Connect service). */
export type ControlChannel = "opamp" | "remotecfg";

/** The runtime a collector in each management mode runs. */
export const RUNTIME_OF: Record<ManagementMode, Runtime> = { opamp: "otelcol", "rcfg-remotecfg": "alloy" };

/**
 * The one name a person reads for each runtime, wherever it is shown: the
 * product, and how svc manages it (each runtime has exactly one management mode).
 */
export const RUNTIME_NAMES: Record<Runtime, string> = {
  otelcol: "OpenTelemetry Collector (OpAMP)",
  alloy: "Alloy (remote config)",
};

/** A management mode's name is its runtime's. */
export const MODE_NAMES: Record<ManagementMode, string> = {
  opamp: RUNTIME_NAMES[RUNTIME_OF.opamp],
  "rcfg-remotecfg": RUNTIME_NAMES[RUNTIME_OF["rcfg-remotecfg"]],
};

/** A control channel's name is the runtime it serves. */
export const CHANNEL_NAMES: Record<ControlChannel, string> = { opamp: RUNTIME_NAMES.otelcol, remotecfg: RUNTIME_NAMES.alloy };

/** The control channel that serves a collector in each management mode. */
export const CHANNEL_OF: Record<ManagementMode, ControlChannel> = { opamp: "opamp", "rcfg-remotecfg": "remotecfg" };
