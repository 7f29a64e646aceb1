/**
 * Server configuration: defaults, then the YAML file, then environment
 * variables (alias below canonical SVC_ name), then validation. Every problem
 * names its key and where the value came from (file line or variable). The
 * agent's sections of a file both read (shared/host-config.ts) are passed by.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { isAlias, isMap, isScalar, LineCounter, parseDocument, type Node, type YAMLMap } from "yaml";
import type { RateLimit } from "../lib/ratelimit.ts";
import { KeyFileError, readKeyFile } from "../secrets/key.ts";
import { foreignKeys, foreignSections } from "../../shared/host-config.ts";
import { buildDatabaseUri } from "./database-uri.ts";
import { envName, KEYS, type ConfigKey, type KeySpec, type RawValue } from "./keys.ts";

export const DEFAULT_CONFIG_PATH = "/etc/svc/config.yaml";

export interface ServerConfig {
  /** Normalised without a trailing slash; "" when unset. */
  externalUrl: string;
  /** True when externalUrl was not configured and the quick-start uses the URL it serves (main.ts). */
  externalUrlFromListen?: boolean;
  listen: { host: string; port: number };
  tls: { certFile: string; keyFile: string } | null;
  storage: { backend: "embedded" | "external"; boltPath: string; auditLogRetentionDays: number };
  /** `uri` is the effective connection string (given, or built from the parts). */
  database: { uri: string; database: string };
  security: { cors: { allowedOrigins: string[] } };
  bootstrap: { adminToken: string };
  /** trustedProxies: peers whose X-Forwarded-Proto is believed (TLS terminated in front). */
  http: { maxBodyBytes: number; trustedProxies: string[]; maxConnections: number; idleTimeoutSeconds: number };
  /** Token buckets: per credential on the REST API, per address for failed auth, per token and address for enrollment. */
  /** passwords: attempts per client address (log in, redeem a link); loginFailures: failed log-ins per username and address. */
  rateLimit: { api: RateLimit; authFailures: RateLimit; enrollment: RateLimit; passwords: RateLimit; loginFailures: RateLimit };
  /** Where the agent packages and their SHA256SUMS are, served under /downloads/. */
  downloads: { dir: string };
  /**
   * Past these the OpAMP endpoint answers 503 with Retry-After instead of queueing.
   * heartbeatSeconds: the interval offered to collectors; null leaves each its own.
   */
  opamp: { maxConnections: number; maxConcurrentRequests: number; heartbeatSeconds: number | null };
  /** metrics.listen: a second address serving GET /metrics without credentials; null when unset (server/metrics/). */
  metrics: { listen: { host: string; port: number } | null };
  /** How long collector.offline and collector.stalled wait, and how early token.expiring is sent (server/webhooks/). */
  webhooks: { offlineMinutes: number; stalledMinutes: number; tokenExpiringHours: number; allowPrivateTargets: boolean };
  /** The key that seals secrets at rest: given (key), in a file (keyFile), or neither (embedded: generated beside the state file). */
  secrets: { key: string; keyFile: string };
  logging: { level: string };
  /** Where invite and reset mails go out; null (links shown to the admin instead) without smtp.host. */
  smtp: SmtpConfig | null;
  /** trustedAttributes: reported attribute keys matchers may read, besides the System page's list (server/collectors/trust.ts). */
  fleet: { trustedAttributes: string[] };
  /** Host paths sources may read without the sources:hostpaths scope (server/catalog/hostpaths.ts). */
  sources: { hostPaths: { allowedPrefixes: string[]; denyPatterns: string[] } };
  /** The file that was read, if any. */
  file: string | null;
}

export interface SmtpConfig {
  host: string;
  port: number;
  /** Implicit TLS from the first byte; otherwise STARTTLS when the server offers it. */
  secure: boolean;
  user: string;
  password: string;
  from: string;
}

export interface ConfigProblem {
  key: string;
  source: string;
  message: string;
}

export class ConfigError extends Error {
  constructor(readonly problems: ConfigProblem[]) {
    super(problems.map((p) => `${p.key}: ${p.message} (${p.source})`).join("\n"));
    this.name = "ConfigError";
  }
}

export interface LoadOptions {
  /** A file given with --config: it must exist. Undefined reads the default path if present; null reads no file. */
  path?: string | null;
  env?: Record<string, string | undefined>;
  /** Replaces built-in defaults, e.g. the quick-start's local state file. */
  defaults?: Partial<Record<ConfigKey, RawValue>>;
}

interface Setting {
  value: unknown;
  source: string;
}

const KEY_NAMES = Object.keys(KEYS) as ConfigKey[];
/** The agent's part of a config file both read (shared/host-config.ts): accepted, never read or checked here. */
const AGENT_ONLY = new Set([...foreignSections("server"), ...foreignKeys("server")]);

export function loadConfig(options: LoadOptions = {}): ServerConfig {
  const env = options.env ?? process.env;
  const settings = new Map<ConfigKey, Setting>();
  const problems: ConfigProblem[] = [];
  for (const key of KEY_NAMES) {
    settings.set(key, { value: options.defaults?.[key] ?? KEYS[key].default, source: "default" });
  }

  const file = options.path === undefined ? (existsSync(DEFAULT_CONFIG_PATH) ? DEFAULT_CONFIG_PATH : null) : options.path;
  if (file !== null) readFile(file, settings, problems);
  readEnv(env, settings, problems);

  const values = new Map<ConfigKey, RawValue>();
  for (const key of KEY_NAMES) {
    const spec: KeySpec = KEYS[key];
    const setting = settings.get(key)!;
    const coerced = coerce(spec, setting);
    if (typeof coerced === "string" && coerced.startsWith("!")) {
      problems.push({ key, source: setting.source, message: coerced.slice(1) });
      continue;
    }
    const value = (coerced as { ok: RawValue }).ok;
    const problem = spec.check?.(value as never);
    if (problem) {
      problems.push({ key, source: setting.source, message: spec.secret ? problem : `${problem} (got ${JSON.stringify(value)})` });
      continue;
    }
    values.set(key, value);
  }

  // Checks across keys run on the keys that passed their own check, so every problem is reported at once.
  const get = <T extends RawValue>(key: ConfigKey) => values.get(key) as T;
  const has = (...keys: ConfigKey[]) => keys.every((key) => values.has(key));
  const certFile = get<string>("tls.certFile");
  const keyFile = get<string>("tls.keyFile");
  if (has("tls.certFile", "tls.keyFile") && (certFile === "") !== (keyFile === "")) {
    const [missing, given] = certFile === "" ? (["tls.certFile", "tls.keyFile"] as const) : (["tls.keyFile", "tls.certFile"] as const);
    // The source is where the other one was set: the unset key has no place to point at.
    problems.push({
      key: missing,
      source: settings.get(given)!.source,
      message: `must be set because ${given} is set (tls.certFile and tls.keyFile must be set together)`,
    });
  }
  for (const key of ["tls.certFile", "tls.keyFile"] as const) {
    const path = values.get(key) as string | undefined;
    if (path !== undefined && path !== "" && !existsSync(path)) {
      problems.push({ key, source: settings.get(key)!.source, message: `file ${path} does not exist` });
    }
  }
  const databaseKeys = ["database.uri", "database.server", "database.user", "database.password", "database.database"] as const;
  const database = has(...databaseKeys)
    ? buildDatabaseUri({
        uri: get("database.uri"),
        server: get("database.server"),
        user: get("database.user"),
        password: get("database.password"),
        database: get("database.database"),
      })
    : undefined;
  if (has("database.user", "database.password") && get("database.password") !== "" && get("database.user") === "") {
    problems.push({
      key: "database.password",
      source: settings.get("database.password")!.source,
      message: "is set without database.user, so it would be dropped from the connection string; set database.user too",
    });
  }
  const backend = get<"embedded" | "external">("storage.backend");
  if (backend === "external" && database === "") {
    problems.push({
      key: "database.uri",
      source: settings.get("database.uri")!.source,
      message: "storage.backend is external, so database.uri or database.server must be set",
    });
  }
  const secretsKeyFile = values.get("secrets.keyFile") as string | undefined;
  if (secretsKeyFile !== undefined && secretsKeyFile !== "") {
    try {
      readKeyFile(secretsKeyFile);
    } catch (error) {
      if (!(error instanceof KeyFileError)) throw error;
      problems.push({ key: "secrets.keyFile", source: settings.get("secrets.keyFile")!.source, message: error.message });
    }
  }
  if (backend === "external" && has("secrets.key", "secrets.keyFile") && get("secrets.key") === "" && get("secrets.keyFile") === "") {
    problems.push({
      key: "secrets.keyFile",
      source: settings.get("storage.backend")!.source,
      message:
        "storage.backend is external, so the replicas need the one secrets key they share: set secrets.keyFile (a file holding the base64 of 32 random bytes, e.g. from 'openssl rand -base64 32') or SVC_SECRETS_KEY (the key itself); after a migrate from embedded, use the state directory's secrets.key",
    });
  }
  if (has("smtp.host", "smtp.from") && get("smtp.host") !== "" && get("smtp.from") === "") {
    problems.push({
      key: "smtp.from",
      source: settings.get("smtp.host")!.source,
      message: "must be set because smtp.host is set (the address invite and reset mails come from)",
    });
  }
  if (has("smtp.user", "smtp.password") && get("smtp.password") !== "" && get("smtp.user") === "") {
    problems.push({ key: "smtp.password", source: settings.get("smtp.password")!.source, message: "is set without smtp.user; set smtp.user too" });
  }
  if (problems.length > 0) throw new ConfigError(problems);

  const [, host, port] = /^\[?(.*?)\]?:(\d+)$/.exec(get<string>("listen"))!;
  const retention = get<number>("storage.auditLogRetentionDays");
  return {
    externalUrl: get<string>("externalUrl").replace(/\/$/, ""),
    listen: { host: host!, port: Number(port) },
    tls: certFile === "" ? null : { certFile, keyFile },
    storage: { backend, boltPath: get("storage.boltPath"), auditLogRetentionDays: retention === 0 ? 365 : retention },
    database: { uri: database!, database: get("database.database") },
    security: { cors: { allowedOrigins: get<string[]>("security.cors.allowedOrigins").map((o) => o.replace(/\/$/, "")) } },
    bootstrap: { adminToken: get("bootstrap.adminToken") },
    http: {
      maxBodyBytes: get("http.maxBodyBytes"),
      trustedProxies: get<string[]>("http.trustedProxies"),
      maxConnections: get("http.maxConnections"),
      idleTimeoutSeconds: get("http.idleTimeoutSeconds"),
    },
    rateLimit: {
      api: { perSecond: get("rateLimit.api.perSecond"), burst: get("rateLimit.api.burst") },
      authFailures: { perSecond: get("rateLimit.authFailures.perSecond"), burst: get("rateLimit.authFailures.burst") },
      enrollment: { perSecond: get("rateLimit.enrollment.perSecond"), burst: get("rateLimit.enrollment.burst") },
      passwords: { perSecond: get("rateLimit.passwords.perSecond"), burst: get("rateLimit.passwords.burst") },
      loginFailures: { perSecond: get<number>("rateLimit.loginFailures.perMinute") / 60, burst: get("rateLimit.loginFailures.burst") },
    },
    downloads: { dir: get("downloads.dir") },
    opamp: {
      maxConnections: get("opamp.maxConnections"),
      maxConcurrentRequests: get("opamp.maxConcurrentRequests"),
      heartbeatSeconds: get<number>("opamp.heartbeatSeconds") === 0 ? null : get<number>("opamp.heartbeatSeconds"),
    },
    metrics: { listen: hostPort(get<string>("metrics.listen")) },
    webhooks: {
      offlineMinutes: get("webhooks.offlineMinutes"),
      stalledMinutes: get("webhooks.stalledMinutes"),
      tokenExpiringHours: get("webhooks.tokenExpiringHours"),
      allowPrivateTargets: get("webhooks.allowPrivateTargets"),
    },
    secrets: { key: get("secrets.key"), keyFile: secretsKeyFile ?? "" },
    logging: { level: get("logging.level") },
    smtp:
      get<string>("smtp.host") === ""
        ? null
        : {
            host: get("smtp.host"),
            port: get("smtp.port"),
            secure: get("smtp.secure"),
            user: get("smtp.user"),
            password: get("smtp.password"),
            from: get("smtp.from"),
          },
    fleet: { trustedAttributes: get<string[]>("fleet.trustedAttributes") },
    sources: {
      hostPaths: { allowedPrefixes: get<string[]>("sources.hostPaths.allowedPrefixes"), denyPatterns: get<string[]>("sources.hostPaths.denyPatterns") },
    },
    file,
  };
}

/** A checked host:port (listen's form), or null for "" (unset). */
function hostPort(value: string): { host: string; port: number } | null {
  if (value === "") return null;
  const [, host, port] = /^\[?(.*?)\]?:(\d+)$/.exec(value)!;
  return { host: host!, port: Number(port) };
}

/** Far larger than any real config.yaml; bounds what a wrong --config (a log file, a disk image) costs to read and parse. */
const MAX_CONFIG_BYTES = 1024 * 1024;

function readFile(path: string, settings: Map<ConfigKey, Setting>, problems: ConfigProblem[]): void {
  let text: string;
  try {
    if (statSync(path).size > MAX_CONFIG_BYTES) {
      problems.push({ key: "--config", source: path, message: `the file is larger than ${MAX_CONFIG_BYTES} bytes` });
      return;
    }
    text = readFileSync(path, "utf8");
  } catch (error) {
    problems.push({ key: "--config", source: path, message: `cannot read the file: ${(error as Error).message}` });
    return;
  }
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: false });
  const where = (node: Node | null | undefined) => (node?.range ? `${path} line ${lineCounter.linePos(node.range[0]).line}` : path);
  if (doc.errors.length > 0) {
    for (const error of doc.errors) {
      const line = lineCounter.linePos(error.pos[0]).line;
      problems.push({ key: "(yaml)", source: `${path} line ${line}`, message: error.message.split("\n")[0]! });
    }
    return;
  }
  try {
    // Expands aliases under a cap first, so an alias bomb is refused rather than followed.
    doc.toJS({ maxAliasCount: 100 });
  } catch (error) {
    problems.push({ key: "(yaml)", source: path, message: (error as Error).message });
    return;
  }
  if (doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null)) return;
  if (!isMap(doc.contents)) {
    problems.push({ key: "(root)", source: where(doc.contents), message: "the file must hold a mapping of keys" });
    return;
  }
  const walk = (map: YAMLMap, prefix: string) => {
    for (const pair of map.items) {
      const keyNode = pair.key as Node;
      const name = isScalar(keyNode) ? String(keyNode.value) : String(keyNode);
      const path = prefix + name;
      // An alias stands for its anchored node (the alias count was capped above, so this cannot blow up).
      const valueNode = (isAlias(pair.value) ? (pair.value.resolve(doc) ?? null) : pair.value) as Node | null;
      if (AGENT_ONLY.has(path)) continue;
      if (path in KEYS) {
        const value = valueNode === null ? null : valueNode.toJS(doc);
        if (value !== null) settings.set(path as ConfigKey, { value, source: where(keyNode) });
      } else if (KEY_NAMES.some((key) => key.startsWith(path + "."))) {
        if (valueNode === null || (isScalar(valueNode) && valueNode.value === null)) continue;
        if (!isMap(valueNode)) {
          problems.push({ key: path, source: where(keyNode), message: "must be a mapping of keys" });
        } else {
          walk(valueNode, path + ".");
        }
      } else {
        problems.push({ key: path, source: where(keyNode), message: "unknown key" });
      }
    }
  };
  walk(doc.contents, "");
}

function readEnv(env: Record<string, string | undefined>, settings: Map<ConfigKey, Setting>, problems: ConfigProblem[]) {
  for (const key of KEY_NAMES) {
    const spec: KeySpec = KEYS[key];
    const names = [envName(key), ...(spec.aliases ?? [])];
    const name = names.find((n) => env[n] !== undefined && env[n] !== "");
    if (name !== undefined) settings.set(key, { value: env[name], source: `environment variable ${name}` });
  }
  const known = new Set(KEY_NAMES.map(envName));
  for (const name of Object.keys(env)) {
    if (name.startsWith("SVC_") && !known.has(name) && !name.startsWith("SVC_TEST_")) {
      problems.push({ key: name, source: `environment variable ${name}`, message: "no configuration key has this variable" });
    }
  }
}

/** Returns {ok: value} or a problem sentence prefixed with "!". */
function coerce(spec: KeySpec, setting: Setting): { ok: RawValue } | string {
  const { value } = setting;
  const fromEnv = setting.source.startsWith("environment");
  switch (spec.type) {
    case "string":
      if (typeof value === "string") return { ok: value.trim() };
      return "!must be a string";
    case "int": {
      const n = fromEnv && typeof value === "string" && /^-?\d+$/.test(value.trim()) ? Number(value) : value;
      return typeof n === "number" && Number.isSafeInteger(n) ? { ok: n } : "!must be a whole number";
    }
    case "bool": {
      if (typeof value === "boolean") return { ok: value };
      if (fromEnv && typeof value === "string" && /^(true|false|1|0)$/i.test(value.trim())) {
        return { ok: /^(true|1)$/i.test(value.trim()) };
      }
      return "!must be true or false";
    }
    case "list": {
      if (fromEnv && typeof value === "string") {
        return {
          ok: value
            .split(",")
            .map((s) => s.trim())
            .filter((s) => s !== ""),
        };
      }
      if (Array.isArray(value) && value.every((v) => typeof v === "string")) return { ok: value };
      return "!must be a list of strings";
    }
  }
}
