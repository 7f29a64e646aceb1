/**
 * The shapes shared by the agent's modules and, for what goes on the wire,
 * by the server's `/v1/agent` channel. Types only: importing this file costs
 * the compiled binary nothing.
 */
import type { Runtime } from "../shared/vocabulary.ts";

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

/** One processor step of a suggested pipeline: a catalog processor type and its config. */
export interface TemplateStep {
  type: string;
  config: Record<string, unknown>;
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

/** A fingerprint that matched, with the evidence and the log files that exist now. */
export interface DetectedService {
  fingerprint: string;
  title: string;
  /** Which matchers hit, e.g. `process:nginx`, `port:443`, `unit:nginx.service`, `file:/etc/nginx/nginx.conf`. */
  evidence: string[];
  pids: number[];
  ports: number[];
  /** Files matching the fingerprint's logPaths (bounded). */
  logFiles: string[];
  pipeline: Fingerprint["pipeline"];
}

/** A collector found on the host, configured or detected. */
export interface DetectedCollector {
  name: string;
  collectorType: CollectorType;
  binaryPath: string | null;
  configPath: string | null;
  serviceName: string | null;
  running: boolean;
  pid: number | null;
  nativeRemoteConfig: boolean;
  metricsUrl: string;
  /** Whether the metrics endpoint answered 2xx on the last probe. */
  metricsAlive: boolean;
}

/** A place logs are found, for onboarding. */
export interface LogSource {
  kind: "file" | "journald" | "docker" | "kubernetes";
  /** A glob or directory for files; `journald` for the journal. */
  path: string;
  /** The fingerprint that suggested it, if any. */
  service: string | null;
}

export interface HostFacts {
  hostname: string;
  os: { platform: string; distro: string; release: string; kernel: string; arch: string };
  cpu: { model: string; cores: number };
  memoryBytes: number;
  ips: string[];
  machineId: string | null;
  container: { inContainer: boolean; kubernetes: boolean; podName: string | null; namespace: string | null; nodeName: string | null };
}

export interface DiscoveryReport {
  services: DetectedService[];
  collectors: DetectedCollector[];
  logSources: LogSource[];
}

/** An entry of a directory listing. */
export interface BrowseEntry {
  name: string;
  type: "file" | "directory" | "symlink" | "other";
  size: number;
  modifiedAt: string;
}

export interface BrowseListing {
  path: string;
  entries: BrowseEntry[];
  truncated: boolean;
}

export interface BrowseSample {
  path: string;
  mode: "lines" | "bytes";
  from: "head" | "tail";
  size: number;
  binary: boolean;
  /** UTF-8 text (lossy) of the sample; empty for binary files. */
  content: string;
  /** Lines returned in line mode. */
  lines: number;
  truncated: boolean;
}

/** Error codes an agent answers a request with. */
export type AgentErrorCode =
  | "browse_disabled"
  | "outside_allowed_roots"
  | "denied_by_pattern"
  | "not_found"
  | "not_a_directory"
  | "not_a_file"
  | "special_file"
  | "hard_link"
  | "permission_denied"
  | "bad_request"
  | "internal";

/** Agent → server messages (JSON text frames on `/v1/agent`). */
export type AgentMessage =
  | { type: "hello"; agentId: string; version: string; environment: string; host: HostFacts; browse: { enabled: boolean; allowedRoots: string[] } }
  | { type: "discovery"; report: DiscoveryReport }
  | { type: "heartbeat" }
  | { type: "response"; id: string; result: unknown }
  | { type: "response"; id: string; error: { code: AgentErrorCode; message: string } };

/** Server → agent messages. */
export type ServerMessage =
  /** `credential` only on the session that enrolled the agent: its own credential, to keep and present from then on. */
  | { type: "welcome"; agentId: string; heartbeatSeconds: number; credential?: string }
  | { type: "browse.list"; id: string; path: string }
  | { type: "browse.sample"; id: string; path: string; mode: "lines" | "bytes"; from: "head" | "tail" }
  | { type: "discovery.rescan"; id: string };

/** The server messages that are requests, answered by `id`. */
export type ServerRequest = Extract<ServerMessage, { id: string }>;
