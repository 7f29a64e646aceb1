/**
 * The collectors on this host: the configured ones (`collector` / `collectors[]`)
 * with their state filled in from what runs, or, when none is configured, the ones
 * found by process name, running unit or bootstrap config file — Runtime O
 * (OpenTelemetry Collector, unit `otel-collector`) and Runtime R (unit
 * `rcfg-runtime`, Alloy-style). Each one's metrics endpoint is probed for liveness.
 */
import { existsSync } from "node:fs";
import { basename, extname, join } from "node:path";
import type { CollectorConfig, CollectorType, ServiceFacts } from "../types.ts";
import type { DetectedCollector } from "../../shared/agent-protocol.ts";
import { type MetricsProbe, probeMetrics } from "./probe.ts";

type ProcessFact = ServiceFacts["processes"][number];

/** A collector before its probe. */
type Found = Omit<DetectedCollector, "metricsAlive">;

/** How a runtime shows itself on a host; each list in order of preference. */
interface RuntimeSignature {
  type: CollectorType;
  /** Collector binaries first, then the supervisor that runs one. */
  binaries: string[];
  /** Ours first, then the units the upstream packages ship. */
  units: string[];
  configPaths: string[];
  metricsUrl: string;
  nativeRemoteConfig: boolean;
}

const SIGNATURES: RuntimeSignature[] = [
  {
    type: "otelcol",
    binaries: ["otelcol-contrib", "otelcol", "otelcol-k8s", "otelcol-otlp", "opampsupervisor"],
    units: ["otel-collector", "otelcol-contrib", "otelcol", "otelcol-k8s", "opampsupervisor"],
    configPaths: ["/etc/otel-collector/config.yaml", "/etc/otelcol-contrib/config.yaml", "/etc/otelcol/config.yaml"],
    metricsUrl: "http://127.0.0.1:8888/metrics",
    nativeRemoteConfig: false,
  },
  {
    type: "alloy",
    binaries: ["alloy", "rcfg-runtime"],
    units: ["rcfg-runtime", "alloy"],
    configPaths: ["/etc/rcfg-runtime/config.rcfg", "/etc/alloy/config.alloy"],
    metricsUrl: "http://127.0.0.1:12345/metrics",
    nativeRemoteConfig: true,
  },
];

/**
 * `configured` as given, or, when empty, one entry per runtime found. `root` prefixes
 * the config-file checks (tests point it at a temp dir); reported paths stay absolute.
 */
export async function detectCollectors(
  configured: CollectorConfig[],
  facts: ServiceFacts,
  probe: MetricsProbe = probeMetrics,
  root = "/",
): Promise<DetectedCollector[]> {
  const found =
    configured.length > 0 ? configured.map((config) => fromConfig(config, facts)) : SIGNATURES.flatMap((runtime) => detect(runtime, facts, root) ?? []);
  return Promise.all(found.map(async (collector) => ({ ...collector, metricsAlive: await probe(collector.metricsUrl) })));
}

/**
 * The process is found by the configured binary path, else by the runtime's binary
 * names (so collectors of one type that all omit binaryPath report the same pid).
 */
function fromConfig(config: CollectorConfig, facts: ServiceFacts): Found {
  const runtime = runtimeOf(config);
  const process = config.binaryPath ? byBinaryPath(facts.processes, config.binaryPath) : byName(facts.processes, runtime.binaries);
  const unitRunning = config.serviceName !== null && facts.units.includes(unitName(config.serviceName));
  return {
    name: config.name,
    collectorType: runtime.type,
    binaryPath: config.binaryPath,
    configPath: config.configPath,
    serviceName: config.serviceName,
    running: process !== null || unitRunning,
    pid: process?.pid ?? null,
    nativeRemoteConfig: config.nativeRemoteConfig ?? runtime.nativeRemoteConfig,
    metricsUrl: config.metricsUrl ?? runtime.metricsUrl,
  };
}

/** The configured type, else the runtime whose binary, unit or config-file extension the config names; Runtime O by default. */
function runtimeOf(config: CollectorConfig): RuntimeSignature {
  if (config.collectorType) return SIGNATURES.find((runtime) => runtime.type === config.collectorType)!;
  const { binaryPath, serviceName, configPath } = config;
  const named = (runtime: RuntimeSignature) =>
    (binaryPath !== null && runtime.binaries.includes(basename(binaryPath))) ||
    (serviceName !== null && runtime.units.includes(serviceName.replace(/\.service$/, ""))) ||
    (configPath !== null && runtime.configPaths.some((path) => extname(path) === extname(configPath)));
  return SIGNATURES.find(named) ?? SIGNATURES[0]!;
}

/** Null when nothing of the runtime is on the host. */
function detect(runtime: RuntimeSignature, facts: ServiceFacts, root: string): Found | null {
  const process = byName(facts.processes, runtime.binaries);
  const service = runtime.units.find((unit) => facts.units.includes(unitName(unit))) ?? null;
  const configPath = runtime.configPaths.find((path) => existsSync(join(root, path))) ?? null;
  if (!process && !service && !configPath) return null;
  return {
    name: service ?? process?.name ?? runtime.units[0]!,
    collectorType: runtime.type,
    binaryPath: process ? executablePath(process) : null,
    configPath,
    serviceName: service,
    running: process !== null || service !== null,
    pid: process?.pid ?? null,
    nativeRemoteConfig: runtime.nativeRemoteConfig,
    metricsUrl: runtime.metricsUrl,
  };
}

function unitName(serviceName: string): string {
  return serviceName.endsWith(".service") ? serviceName : `${serviceName}.service`;
}

/** The first process running one of `names`, by the order of `names`. */
function byName(processes: ProcessFact[], names: string[]): ProcessFact | null {
  for (const name of names) {
    const process = processes.find((p) => p.name === name);
    if (process) return process;
  }
  return null;
}

/** A process started by that path, else one with its base name. */
function byBinaryPath(processes: ProcessFact[], binaryPath: string): ProcessFact | null {
  const started = processes.find((p) => p.command === binaryPath || p.command.startsWith(`${binaryPath} `));
  return started ?? byName(processes, [basename(binaryPath)]);
}

/** argv[0] when it is an absolute path to the executable; null when started by a bare name. */
function executablePath(process: ProcessFact): string | null {
  const argv0 = process.command.split(" ")[0] ?? "";
  return argv0.startsWith("/") && basename(argv0) === process.name ? argv0 : null;
}
