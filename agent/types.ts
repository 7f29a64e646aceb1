/**
 * The shapes of the agent's own config and discovery inputs. What goes on the
 * wire is declared in `shared/agent-protocol.ts`. Types only: importing this
 * file costs the compiled binary nothing.
 */
import type { Runtime } from "../shared/vocabulary.ts";
import type { TemplateStep } from "../shared/agent-protocol.ts";

/** Keys under `browse` (spec "Agent log browsing"), defaults applied. */
export interface BrowseConfig {
  enabled: boolean;
  /** Absolute directory prefixes; `*` or `/` grants the whole filesystem. */
  allowedRoots: string[];
  /** Globs matched against every component of the real path, and against the whole path. */
  denyPatterns: string[];
  maxDirEntries: number;
  maxSampleLines: number;
  maxSampleBytes: number;
}

/** The wire name of what a collector runs. */
export type CollectorType = Runtime;

/** One managed collector as configured (`collector` or an entry of `collectors[]`), defaults applied. */
export interface CollectorConfig {
  name: string;
  binaryPath: string | null;
  configPath: string | null;
  serviceName: string | null;
  collectorType: CollectorType | null;
  /**
   * An explicit value wins, else true for Runtime R (`alloy`), false otherwise; null
   * while `collectorType` is unset, until discovery has guessed the type.
   */
  nativeRemoteConfig: boolean | null;
  /**
   * Liveness probe only; default port 12345 for Runtime R, 8888 otherwise, path
   * /metrics, on 127.0.0.1; null while the type is unset, as above.
   */
  metricsUrl: string | null;
}

/** The agent config file, validated, defaults applied. */
export interface AgentConfig {
  server: {
    /** Normalised: `wss://host[:port]/v1/agent` (or `ws://` for loopback). */
    url: string;
    token: string;
  };
  /** `stateDir` holds the agent's own credential (agent/credential.ts). */
  agent: { id: string | null; environment: string; stateDir: string };
  certificates: { caCertPath: string | null; insecureSkipVerify: boolean };
  /** `collectors[]` when set, else the single `collector` block when it names anything, else empty (detect). */
  collectors: CollectorConfig[];
  logging: { level: "debug" | "info" | "warn" | "error"; file: string | null };
  customFingerprints: Fingerprint[];
  browse: BrowseConfig;
}

/** A problem with one key of a config file; `key` is a dotted path such as `collectors[1].name`. */
export interface ConfigProblem {
  key: string;
  message: string;
}

/** How a service is recognised; any one matcher that hits is enough. */
export interface FingerprintMatch {
  /** Executable base names (exact) of running processes. */
  processNames: string[];
  /** TCP ports something listens on. */
  ports: number[];
  /** systemd unit names (exact, e.g. `nginx.service`). */
  units: string[];
  /** Absolute paths whose existence marks the service as installed. */
  files: string[];
}

/** A service fingerprint (`fingerprints/*.yaml`, or `customFingerprints[]` in the agent config). */
export interface Fingerprint {
  /** Lower-case id, unique among built-in and custom fingerprints (custom wins). */
  name: string;
  title: string;
  match: FingerprintMatch;
  /** Absolute file globs of the service's logs. */
  logPaths: string[];
  /** The source to create for it: a catalog source type and its config, then processors. */
  pipeline: { source: TemplateStep; processors: TemplateStep[] };
}

/** What the agent saw running on the host. */
export interface ServiceFacts {
  processes: { pid: number; name: string; command: string; user: string | null }[];
  listening: { port: number; protocol: "tcp" | "udp"; address: string; pid: number | null; process: string | null }[];
  /** Active systemd units. */
  units: string[];
}
