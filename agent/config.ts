/**
 * The agent config file (spec "Agent config file" and "Agent log browsing"),
 * given with `--config`: YAML, validated key by key, defaults applied. Every
 * problem names its dotted key and all of them are reported at once; an
 * unknown key is an error, so a typo is never silently ignored. Paths must be
 * absolute: the agent runs as a service, whose working directory nobody chose.
 *
 * - `server.url` is normalised to the `/v1/agent` WebSocket endpoint; plain
 *   http/ws only to a loopback host, since the token travels with it. A
 *   legacy `grpcs://<host>:50051` is accepted with a notice.
 * - `server.token` must be an enrollment token (`svcen_…`): the only kind
 *   `/v1/agent` accepts, so anything else fails here rather than at connect.
 * - `collectors[]` supersedes `collector`; a `collector` block that sets
 *   nothing means "detect". `collectorType` is `otelcol` (Runtime O) or
 *   `alloy` (Runtime R), with no aliases.
 * - `agent.stateDir` (default /var/lib/svc-agent) holds the credential the
 *   server issues at the first enrollment (credential.ts).
 * - `browse.denyPatterns` adds to the built-in patterns, never replaces them.
 * - The server's sections (shared/host-config.ts) are accepted and not read: on a
 *   host running both, /etc/svc/config.yaml is one file.
 */
import { accessSync, constants, readFileSync, statSync } from "node:fs";
import { posix } from "node:path";
import { ALWAYS_DENIED, DEFAULT_ALLOWED_ROOTS } from "../shared/deny.ts";
import { validateFingerprint } from "./fingerprints.ts";
import type { AgentConfig, BrowseConfig, CollectorConfig, CollectorType, ConfigProblem, Fingerprint } from "./types.ts";
import { child, isMapping, isUnset, KeyReader, MAX_YAML_BYTES, parseYaml, type Check, type Mapping } from "./yaml-keys.ts";
import { foreignKeys, foreignSections, HOST_CONFIG_SECTIONS } from "../shared/host-config.ts";
import { RUNTIME_NAMES, RUNTIMES } from "../shared/vocabulary.ts";

export class AgentConfigError extends Error {
  constructor(readonly problems: ConfigProblem[]) {
    super(problems.map((p) => `${p.key}: ${p.message}`).join("\n"));
    this.name = "AgentConfigError";
  }
}

export interface ParsedAgentConfig {
  config: AgentConfig;
  /** Sentences for the caller to log once at info, e.g. a normalised legacy server.url. */
  notices: string[];
}

/** Where the agent keeps its credential (systemd StateDirectory=svc-agent). */
export const DEFAULT_STATE_DIR = "/var/lib/svc-agent";

export { ALWAYS_DENIED, DEFAULT_ALLOWED_ROOTS };

const BROWSE_DEFAULTS = { maxDirEntries: 1000, maxSampleLines: 200, maxSampleBytes: 262144 };
const BROWSE_MAX = { maxDirEntries: 100_000, maxSampleLines: 100_000, maxSampleBytes: 16 * 1024 * 1024 };

const LOG_LEVELS = ["debug", "info", "warn", "error"] as const;
const COLLECTOR_TYPES: readonly CollectorType[] = RUNTIMES;

/** The server's keys under a section both read: known here, never read. */
function serverKeysIn(section: string): string[] {
  return foreignKeys("agent").flatMap((key) => (key.startsWith(`${section}.`) ? [key.slice(section.length + 1)] : []));
}

const KEYS = {
  root: [...HOST_CONFIG_SECTIONS.agent, ...foreignSections("agent")],
  server: ["url", "token"],
  agent: ["id", "environment", "stateDir"],
  certificates: ["caCertPath", "insecureSkipVerify"],
  collector: ["name", "binaryPath", "configPath", "serviceName", "collectorType", "nativeRemoteConfig", "metricsUrl"],
  logging: ["level", "file", ...serverKeysIn("logging")],
  browse: ["enabled", "allowedRoots", "denyPatterns", "maxDirEntries", "maxSampleLines", "maxSampleBytes"],
} as const;

/** Reads the file given with `--config`; a missing, unreadable or oversized file is a problem of `--config`. */
export function loadAgentConfig(path: string): ParsedAgentConfig {
  return parseAgentConfig(readConfigFile(path));
}

function readConfigFile(path: string): string {
  const fail = (message: string) => new AgentConfigError([{ key: "--config", message }]);
  try {
    const stat = statSync(path);
    if (!stat.isFile()) throw fail(`${path} is not a regular file`);
    if (stat.size > MAX_YAML_BYTES) throw fail(`${path} is larger than ${MAX_YAML_BYTES} bytes`);
    return readFileSync(path, "utf8");
  } catch (error) {
    if (error instanceof AgentConfigError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw fail(`${path} does not exist`);
    if (code === "EACCES") throw fail(`${path} is not readable by this user`);
    throw fail(`cannot read ${path}: ${(error as Error).message}`);
  }
}

/** The config with defaults applied; throws AgentConfigError listing every problem. */
export function parseAgentConfig(text: string): ParsedAgentConfig {
  const r = new KeyReader();
  const raw = parseYaml(text, r.problems);
  if (r.problems.length > 0) throw new AgentConfigError(r.problems);
  // A file that is not a mapping has no keys to report on; "server.url is required" would only mislead.
  if (!isUnset(raw) && !isMapping(raw)) throw new AgentConfigError([{ key: "(root)", message: "the file must hold a mapping of keys" }]);
  const root = r.mapping(raw, "", KEYS.root);
  const notices: string[] = [];
  const config: AgentConfig = {
    server: readServer(r, root.server, notices),
    agent: readAgent(r, root.agent),
    certificates: readCertificates(r, root.certificates, notices),
    collectors: readCollectors(r, root.collector, root.collectors, notices),
    logging: readLogging(r, root.logging),
    customFingerprints: readCustomFingerprints(r, root.customFingerprints),
    browse: readBrowse(r, root.browse),
  };
  if (r.problems.length > 0) throw new AgentConfigError(r.problems);
  return { config, notices };
}

function absolutePath(v: string): string | undefined {
  return v.startsWith("/") ? undefined : "must be an absolute path";
}

function readServer(r: KeyReader, value: unknown, notices: string[]): AgentConfig["server"] {
  const m = r.mapping(value, "server", KEYS.server);
  const given = r.requiredString(m.url, "server.url", "the server's HTTPS base URL, e.g. https://svc.example.com");
  let url = "";
  if (given !== null) {
    const result = agentEndpoint(given);
    if (typeof result === "string") r.problem("server.url", result);
    else {
      url = result.url;
      if (result.legacy) notices.push(`server.url: legacy ${given} normalised to ${url}`);
    }
  }
  const token = r.requiredString(m.token, "server.token", "the enrollment token (svcen_…) minted in the UI", (v) =>
    // The token itself is a secret, so the message never repeats it.
    /^svcen_[A-Za-z0-9]{32,}$/.test(v) ? undefined : "must be an enrollment token: the prefix svcen_ followed by at least 32 letters and digits",
  );
  return { url, token: token ?? "" };
}

const LOOPBACK_HOST = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;

/**
 * `wss://host[:port][base]/v1/agent` (ws:// for a loopback http URL) from
 * what the operator wrote, or a problem sentence. A path is a base path the
 * server is mounted under; one already ending in /v1/agent is kept.
 */
function agentEndpoint(value: string): { url: string; legacy: boolean } | string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "must be an absolute URL such as https://svc.example.com";
  }
  // The URL parser forgives "https:host"; the value must say scheme://host.
  if (!/^[a-z][a-z0-9+.-]*:\/\/[^/?#]/i.test(value)) return "must be an absolute URL such as https://svc.example.com";
  if (url.username !== "" || url.password !== "") return "must not carry a user name or password (the credential is server.token)";
  if (/[?#]/.test(value)) return "must not have a query or fragment";
  const scheme = url.protocol.slice(0, -1);
  if (scheme === "grpcs") {
    if (url.pathname !== "" && url.pathname !== "/") return "a legacy grpcs:// URL is grpcs://<host>:50051, with no path";
    // The gRPC port is gone with gRPC: the agent channel is on the server's HTTPS port.
    return { url: `wss://${url.hostname.toLowerCase()}/v1/agent`, legacy: true };
  }
  const secure = scheme === "https" || scheme === "wss";
  if (!secure && scheme !== "http" && scheme !== "ws") return "must be an https:// URL (wss:// is accepted too)";
  if (!secure && !LOOPBACK_HOST.test(url.hostname)) {
    return "must use https://: plain http:// would send the token in clear text, so it is allowed only for a loopback host (127.0.0.1, ::1, localhost)";
  }
  const base = url.pathname.replace(/\/+$/, "");
  if (base.endsWith("/v1/opamp")) return "is the collectors' OpAMP endpoint; give the server's base URL, e.g. https://svc.example.com";
  const path = base.endsWith("/v1/agent") ? base : `${base}/v1/agent`;
  return { url: `${secure ? "wss" : "ws"}://${url.host}${path}`, legacy: false };
}

function readAgent(r: KeyReader, value: unknown): AgentConfig["agent"] {
  const m = r.mapping(value, "agent", KEYS.agent);
  const id = r.string(m.id, "agent.id", (v) =>
    /^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/.test(v) ? undefined : "must be 1 to 128 letters, digits, '.', '_', ':' or '-', starting with a letter or digit",
  );
  const environment = r.string(m.environment, "agent.environment", (v) =>
    v.length <= 128 && !/[\p{Cc}]/u.test(v) ? undefined : "must be at most 128 characters, without control characters",
  );
  const stateDir = r.string(m.stateDir, "agent.stateDir", absolutePath);
  return { id, environment: environment ?? "production", stateDir: stateDir ?? DEFAULT_STATE_DIR };
}

function readCertificates(r: KeyReader, value: unknown, notices: string[]): AgentConfig["certificates"] {
  const m = r.mapping(value, "certificates", KEYS.certificates);
  const caCertPath = r.string(m.caCertPath, "certificates.caCertPath", (v) => absolutePath(v) ?? readableFile(v));
  const insecureSkipVerify = r.boolean(m.insecureSkipVerify, "certificates.insecureSkipVerify") ?? false;
  if (insecureSkipVerify) {
    notices.push("certificates.insecureSkipVerify: the server certificate is not verified; use this in a lab only");
  }
  return { caCertPath, insecureSkipVerify };
}

/** Checked at load time, so a bad CA path fails at start rather than at the first connection. */
function readableFile(path: string): string | undefined {
  try {
    if (!statSync(path).isFile()) return `${path} is not a regular file`;
    accessSync(path, constants.R_OK);
    return undefined;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "ENOENT" ? `${path} does not exist` : `${path} cannot be read (${code ?? (error as Error).message})`;
  }
}

function readCollectors(r: KeyReader, single: unknown, list: unknown, notices: string[]): CollectorConfig[] {
  const block = r.mapping(single, "collector", KEYS.collector);
  const fromBlock = Object.values(block).some((v) => !isUnset(v)) ? readCollector(r, block, "collector", 0) : null;
  const entries = r.list(list, "collectors");
  if (entries === null) return fromBlock === null ? [] : [fromBlock];
  if (fromBlock !== null) notices.push("collector: ignored because collectors[] is set");
  const blocks = entries.map((entry, i) => {
    if (isUnset(entry)) r.problem(`collectors[${i}]`, "must be a mapping of keys (an empty entry describes no collector)");
    return r.mapping(entry, `collectors[${i}]`, KEYS.collector);
  });
  const collectors = blocks.map((m, i) => readCollector(r, m, `collectors[${i}]`, i));
  checkUniqueNames(
    r,
    collectors,
    blocks.map((m) => !isUnset(m.name)),
  );
  return collectors;
}

const checkCollectorType: Check<string> = (v) =>
  (COLLECTOR_TYPES as readonly string[]).includes(v) ? undefined : `must be "otelcol" (${RUNTIME_NAMES.otelcol}) or "alloy" (${RUNTIME_NAMES.alloy})`;

const checkCollectorName: Check<string> = (v) =>
  /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/.test(v) ? undefined : "must be 1 to 64 letters, digits, '.', '_', '@' or '-', starting with a letter or digit";

const checkServiceName: Check<string> = (v) => (/^[A-Za-z0-9:_.@\\-]+$/.test(v) ? undefined : "must be a systemd unit name such as alloy.service");

function checkHttpUrl(v: string): string | undefined {
  try {
    const url = new URL(v);
    if ((url.protocol === "http:" || url.protocol === "https:") && /^https?:\/\/[^/?#]/i.test(v)) return undefined;
  } catch {
    // Falls through to the same sentence.
  }
  return "must be an http:// or https:// URL, e.g. http://127.0.0.1:8888/metrics";
}

/** One collector with per-type defaults; a blank name is derived from serviceName, else from the position. */
function readCollector(r: KeyReader, m: Mapping, key: string, index: number): CollectorConfig {
  const serviceName = r.string(m.serviceName, child(key, "serviceName"), checkServiceName);
  const collectorType = r.string(m.collectorType, child(key, "collectorType"), checkCollectorType) as CollectorType | null;
  const runtimeR = collectorType === "alloy";
  // With no type the defaults wait for discovery, which guesses it from the binary, unit or config file.
  const typed = collectorType !== null;
  return {
    name: r.string(m.name, child(key, "name"), checkCollectorName) ?? (serviceName !== null ? serviceName.replace(/\.service$/, "") : `collector-${index + 1}`),
    binaryPath: r.string(m.binaryPath, child(key, "binaryPath"), absolutePath),
    configPath: r.string(m.configPath, child(key, "configPath"), absolutePath),
    serviceName,
    collectorType,
    nativeRemoteConfig: r.boolean(m.nativeRemoteConfig, child(key, "nativeRemoteConfig")) ?? (typed ? runtimeR : null),
    metricsUrl:
      r.string(m.metricsUrl, child(key, "metricsUrl"), checkHttpUrl) ??
      (typed ? (runtimeR ? "http://127.0.0.1:12345/metrics" : "http://127.0.0.1:8888/metrics") : null),
  };
}

function checkUniqueNames(r: KeyReader, collectors: CollectorConfig[], named: boolean[]): void {
  const seen = new Map<string, number>();
  collectors.forEach((c, i) => {
    const first = seen.get(c.name);
    if (first === undefined) {
      seen.set(c.name, i);
      return;
    }
    const how = named[i] ? "" : ` (derived from ${c.serviceName === null ? "its position" : "serviceName"}, as name is blank)`;
    r.problem(`collectors[${i}].name`, `"${c.name}"${how} is already the name of collectors[${first}]; every collector needs a unique name`);
  });
}

function readLogging(r: KeyReader, value: unknown): AgentConfig["logging"] {
  const m = r.mapping(value, "logging", KEYS.logging);
  const level = r.string(m.level, "logging.level", (v) =>
    (LOG_LEVELS as readonly string[]).includes(v) ? undefined : `must be one of ${LOG_LEVELS.map((l) => `"${l}"`).join(", ")}`,
  );
  return {
    level: (level ?? "info") as AgentConfig["logging"]["level"],
    file: r.string(m.file, "logging.file", absolutePath),
  };
}

function readCustomFingerprints(r: KeyReader, value: unknown): Fingerprint[] {
  const fingerprints: Fingerprint[] = [];
  const seen = new Map<string, number>();
  (r.list(value, "customFingerprints") ?? []).forEach((raw, i) => {
    const key = `customFingerprints[${i}]`;
    const { fingerprint, problems } = validateFingerprint(raw, key);
    r.problems.push(...problems);
    if (fingerprint === undefined) return;
    const first = seen.get(fingerprint.name);
    if (first !== undefined) r.problem(`${key}.name`, `"${fingerprint.name}" is already the name of customFingerprints[${first}]`);
    seen.set(fingerprint.name, first ?? i);
    fingerprints.push(fingerprint);
  });
  return fingerprints;
}

const checkRoot: Check<string> = (v) => (v === "*" || v.startsWith("/") ? undefined : 'must be an absolute directory, or "*" for the whole filesystem');

/** Without a trailing slash or `..`, so a prefix test on it means what it says. */
function normaliseRoot(root: string): string {
  if (root === "*") return root;
  const normal = posix.normalize(root);
  return normal.length > 1 ? normal.replace(/\/+$/, "") : normal;
}

function readBrowse(r: KeyReader, value: unknown): BrowseConfig {
  const m = r.mapping(value, "browse", KEYS.browse);
  const allowedRoots = r.stringList(m.allowedRoots, "browse.allowedRoots", checkRoot)?.map(normaliseRoot) ?? DEFAULT_ALLOWED_ROOTS;
  const limit = (name: keyof typeof BROWSE_DEFAULTS) => r.integer(m[name], `browse.${name}`, 1, BROWSE_MAX[name]) ?? BROWSE_DEFAULTS[name];
  return {
    enabled: r.boolean(m.enabled, "browse.enabled") ?? true,
    allowedRoots: [...new Set(allowedRoots)],
    denyPatterns: [...new Set([...ALWAYS_DENIED, ...(r.stringList(m.denyPatterns, "browse.denyPatterns") ?? [])])],
    maxDirEntries: limit("maxDirEntries"),
    maxSampleLines: limit("maxSampleLines"),
    maxSampleBytes: limit("maxSampleBytes"),
  };
}
