/**
 * Every server configuration key: its type, default, environment variables
 * and check. One table serves the file reader, the environment reader, the
 * validator and the README, so a key cannot exist in one and not the others.
 */
import { isIP } from "node:net";
import { DEFAULT_ALLOWED_ROOTS } from "../../shared/deny.ts";
import { KEY_BYTES, parseKey } from "../secrets/secrets.ts";
import { MAX_TRUSTED_KEYS, trustedKeyProblem } from "../../shared/collector-attributes.ts";

export type KeyType = "string" | "int" | "bool" | "list";
export type RawValue = string | number | boolean | string[];

export interface KeySpec {
  type: KeyType;
  default: RawValue;
  /** Extra environment variables, in precedence order, after the canonical SVC_ one. */
  aliases?: string[];
  /** Returns a problem sentence, or nothing when the value is fine. */
  check?: (value: never) => string | undefined;
  /** Kept out of error messages and logs. */
  secret?: boolean;
}

const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"];

function oneOf(values: string[]) {
  return (value: string) => (values.includes(value) ? undefined : `must be one of ${values.map((v) => `"${v}"`).join(", ")}`);
}

function atLeast(min: number) {
  return (value: number) => (value >= min ? undefined : `must be at least ${min}`);
}

function between(min: number, max: number) {
  return (value: number) => (value >= min && value <= max ? undefined : `must be between ${min} and ${max}`);
}

function checkExternalUrl(value: string): string | undefined {
  if (value === "") return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "must be an absolute URL such as https://svc.example.com";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return "must use http or https";
  // The URL parser forgives "https:host" and "https://host\"; the value is used as written, so insist on scheme://host.
  if (!/^https?:\/\//i.test(value)) return "must be an absolute URL such as https://svc.example.com";
  // An empty query or fragment ("https://host/?") parses to "", so the characters themselves are checked too.
  if (url.pathname !== "/" || url.search !== "" || url.hash !== "" || !/^https?:\/\/[^/?#\\]+\/?$/i.test(value)) {
    return "must be a base URL with no path, query or fragment (collectors add the paths themselves)";
  }
  if (url.username || url.password) return "must not carry a user name or password";
  return undefined;
}

function checkListen(value: string): string | undefined {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:\s[\]]+):(\d{1,5})$/.exec(value);
  if (!match) return "must be host:port, for example 0.0.0.0:443 or 127.0.0.1:8080";
  if (Number(match[2]) > 65535) return "port must be between 0 and 65535";
  return undefined;
}

function checkOrigins(values: string[]): string | undefined {
  for (const value of values) {
    let url: URL | undefined;
    try {
      url = new URL(value);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== "https:" && url.protocol !== "http:") || url.origin !== value.replace(/\/$/, "")) {
      return `"${value}" is not an origin (scheme://host[:port], no path)`;
    }
  }
  return undefined;
}

function checkAddresses(values: string[]): string | undefined {
  const bad = values.find((value) => isIP(value) === 0);
  return bad === undefined ? undefined : `"${bad}" is not an IP address`;
}

function checkDatabaseUri(value: string): string | undefined {
  if (value === "") return undefined;
  return /^(postgres|postgresql|mongodb|mongodb\+srv):\/\//.test(value)
    ? undefined
    : "must start with postgres://, postgresql://, mongodb:// or mongodb+srv://";
}

function checkAdminToken(value: string): string | undefined {
  if (value === "") return undefined;
  return /^svcsa_[A-Za-z0-9]{32,}$/.test(value) ? undefined : "must be a service-account token: the prefix svcsa_ followed by at least 32 letters and digits";
}

function checkSecretsKey(value: string): string | undefined {
  if (value === "") return undefined;
  return parseKey(value) ? undefined : `must be the base64 of ${KEY_BYTES} random bytes (e.g. from 'openssl rand -base64 32')`;
}

/** 0 leaves each collector's own interval alone. */
function checkHeartbeat(value: number): string | undefined {
  return value === 0 || (value >= 1 && value <= 86400) ? undefined : "must be 0 (the collector's own interval) or between 1 and 86400 seconds";
}

function checkPort(value: number): string | undefined {
  return value >= 1 && value <= 65535 ? undefined : "must be a port between 1 and 65535";
}

function checkSmtpHost(value: string): string | undefined {
  if (value === "") return undefined;
  return isIP(value) !== 0 || /^[A-Za-z0-9.-]+$/.test(value) ? undefined : "must be a host name or IP address, without scheme or port (the port is smtp.port)";
}

/** A bare address or `Name <address>`: what goes in the From header. */
function checkMailFrom(value: string): string | undefined {
  if (value === "") return undefined;
  return /^([^<>\r\n]*<[^\s@<>]+@[^\s@<>]+>|[^\s@<>]+@[^\s@<>]+)$/.test(value)
    ? undefined
    : "must be an e-mail address such as svc@example.com or svc <svc@example.com>";
}

function checkPrefixes(values: string[]): string | undefined {
  const bad = values.find((value) => value !== "*" && (!value.startsWith("/") || value.split("/").includes("..")));
  return bad === undefined ? undefined : `"${bad}" is not an absolute directory without '..' (or "*" for the whole filesystem)`;
}

function checkTrustedAttributes(values: string[]): string | undefined {
  if (values.length > MAX_TRUSTED_KEYS) return `must hold at most ${MAX_TRUSTED_KEYS} keys`;
  for (const value of values) {
    const problem = trustedKeyProblem(value);
    if (problem !== undefined) return `"${value}": ${problem}`;
  }
  return undefined;
}

function checkPatterns(values: string[]): string | undefined {
  return values.some((value) => value.trim() === "") ? "must not hold an empty pattern" : undefined;
}

export const KEYS = {
  externalUrl: { type: "string", default: "", aliases: ["EXTERNAL_URL"], check: checkExternalUrl },
  listen: { type: "string", default: "127.0.0.1:8080", check: checkListen },
  "tls.certFile": { type: "string", default: "" },
  "tls.keyFile": { type: "string", default: "" },
  "storage.backend": { type: "string", default: "embedded", check: oneOf(["embedded", "external"]) },
  "storage.boltPath": { type: "string", default: "/data/svc/state.db" },
  "storage.auditLogRetentionDays": { type: "int", default: 365, check: atLeast(0) },
  "database.uri": {
    type: "string",
    default: "",
    aliases: ["DATABASE_URI", "DOCDB_URI"],
    check: checkDatabaseUri,
    secret: true,
  },
  "database.server": { type: "string", default: "", aliases: ["DOCDB_SERVER"] },
  "database.user": { type: "string", default: "", aliases: ["DOCDB_USER"] },
  "database.password": { type: "string", default: "", aliases: ["DOCDB_PASSWORD"], secret: true },
  "database.database": { type: "string", default: "svc" },
  "security.cors.allowedOrigins": { type: "list", default: [], check: checkOrigins },
  "bootstrap.adminToken": { type: "string", default: "", check: checkAdminToken, secret: true },
  "http.maxBodyBytes": { type: "int", default: 1048576, check: atLeast(1024) },
  "http.trustedProxies": { type: "list", default: [], check: checkAddresses },
  "http.maxConnections": { type: "int", default: 100000, check: atLeast(1) },
  "http.idleTimeoutSeconds": { type: "int", default: 10, check: between(1, 255) },
  "rateLimit.api.perSecond": { type: "int", default: 100, check: atLeast(1) },
  "rateLimit.api.burst": { type: "int", default: 500, check: atLeast(1) },
  "rateLimit.authFailures.perSecond": { type: "int", default: 20, check: atLeast(1) },
  "rateLimit.authFailures.burst": { type: "int", default: 1000, check: atLeast(1) },
  "rateLimit.enrollment.perSecond": { type: "int", default: 20, check: atLeast(1) },
  "rateLimit.enrollment.burst": { type: "int", default: 1000, check: atLeast(1) },
  "rateLimit.passwords.perSecond": { type: "int", default: 2, check: atLeast(1) },
  "rateLimit.passwords.burst": { type: "int", default: 20, check: atLeast(1) },
  "rateLimit.loginFailures.perMinute": { type: "int", default: 6, check: atLeast(1) },
  "rateLimit.loginFailures.burst": { type: "int", default: 10, check: atLeast(1) },
  "downloads.dir": { type: "string", default: "/usr/share/svc-server/downloads" },
  // GET /metrics without credentials on a second address (server/metrics/); unset: only on the main listener, behind health:read.
  "metrics.listen": { type: "string", default: "", check: (value: string) => (value === "" ? undefined : checkListen(value)) },
  // Webhook events that wait (server/webhooks/): offline and stalled for N minutes, tokens N hours before they expire.
  "webhooks.offlineMinutes": { type: "int", default: 5, check: between(1, 10080) },
  "webhooks.stalledMinutes": { type: "int", default: 10, check: between(1, 10080) },
  "webhooks.tokenExpiringHours": { type: "int", default: 24, check: between(1, 8760) },
  // Webhook URLs may reach loopback and private addresses (server/webhooks/address.ts); off: only public ones.
  "webhooks.allowPrivateTargets": { type: "bool", default: false },
  "opamp.maxConnections": { type: "int", default: 50000, check: atLeast(1) },
  "opamp.maxConcurrentRequests": { type: "int", default: 1000, check: atLeast(1) },
  "opamp.heartbeatSeconds": { type: "int", default: 0, check: checkHeartbeat },
  "secrets.keyFile": { type: "string", default: "" },
  "secrets.key": { type: "string", default: "", check: checkSecretsKey, secret: true },
  "logging.level": { type: "string", default: "info", check: oneOf(LOG_LEVELS) },
  "smtp.host": { type: "string", default: "", check: checkSmtpHost },
  "smtp.port": { type: "int", default: 587, check: checkPort },
  "smtp.secure": { type: "bool", default: false },
  "smtp.user": { type: "string", default: "" },
  "smtp.password": { type: "string", default: "", secret: true },
  "smtp.from": { type: "string", default: "", check: checkMailFrom },
  "sources.hostPaths.allowedPrefixes": { type: "list", default: [...DEFAULT_ALLOWED_ROOTS], check: checkPrefixes },
  "sources.hostPaths.denyPatterns": { type: "list", default: [], check: checkPatterns },
  // Reported attribute keys matchers may read besides the System page's list (server/collectors/trust.ts).
  "fleet.trustedAttributes": { type: "list", default: [], check: checkTrustedAttributes },
} satisfies Record<string, KeySpec>;

export type ConfigKey = keyof typeof KEYS;

/** The canonical variable: prefix SVC_, dots to underscores, upper-cased. */
export function envName(key: string): string {
  return "SVC_" + key.replaceAll(".", "_").toUpperCase();
}
