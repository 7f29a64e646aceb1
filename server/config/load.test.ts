/**
 * The configuration validates itself and names the key: every test that
 * expects a failure checks the problem's key, and where the value came from
 * (file and 1-based line, or the environment variable).
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { foreignSections, HOST_CONFIG_SECTIONS } from "../../shared/host-config.ts";
import { envName, KEYS } from "./keys.ts";
import { ConfigError, DEFAULT_CONFIG_PATH, loadConfig, type ConfigProblem, type LoadOptions, type ServerConfig } from "./load.ts";

const TESTDATA = join(import.meta.dir, "testdata");
const REPO_ROOT = join(import.meta.dir, "..", "..");
const CERT = join(TESTDATA, "tls", "cert.pem");
const KEY = join(TESTDATA, "tls", "key.pem");
const TOKEN = "svcsa_A1b2C3d4A1b2C3d4A1b2C3d4A1b2C3d4";
/** A test-only secrets key (base64 of 32 bytes); testdata/secrets.key holds another. */
const SECRETS_KEY = Buffer.alloc(32, 7).toString("base64");
const SECRETS_KEY_FILE = join(TESTDATA, "secrets.key");

const fixture = (name: string) => join(TESTDATA, name);

/** Loads with no machine file and no process environment unless given. */
function load(options: LoadOptions = {}): ServerConfig {
  return loadConfig({ path: null, env: {}, ...options });
}

/** Runs fn from the repository root, where the fixtures' relative tls paths point. */
function fromRepoRoot<T>(fn: () => T): T {
  const cwd = process.cwd();
  process.chdir(REPO_ROOT);
  try {
    return fn();
  } finally {
    process.chdir(cwd);
  }
}

/** The ConfigError's problems; fails the test when loading succeeds or throws something else. */
function problemsOf(fn: () => unknown): ConfigProblem[] {
  let thrown: unknown;
  try {
    fn();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(ConfigError);
  const error = thrown as ConfigError;
  expect(error.problems.length).toBeGreaterThan(0);
  for (const problem of error.problems) {
    expect(problem.key).not.toBe("");
    expect(problem.source).not.toBe("");
    expect(problem.message).not.toBe("");
    // The summary message carries every problem with its key and source.
    expect(error.message).toContain(`${problem.key}: ${problem.message} (${problem.source})`);
  }
  return error.problems;
}

/** The single problem for key; fails when there is none or more than one. */
function problemFor(problems: ConfigProblem[], key: string): ConfigProblem {
  const found = problems.filter((p) => p.key === key);
  expect(found.map((p) => p.key)).toEqual([key]);
  return found[0]!;
}

/** The 1-based line of the first line of a fixture that contains text. */
function lineOf(name: string, text: string): number {
  const index = readFileSync(fixture(name), "utf8")
    .split("\n")
    .findIndex((line) => line.includes(text));
  if (index < 0) throw new Error(`${name} has no line containing ${text}`);
  return index + 1;
}

/** The source a problem must name for a value on the line of name containing text. */
function at(name: string, text: string): string {
  return `${fixture(name)} line ${lineOf(name, text)}`;
}

const DEFAULTS: Omit<ServerConfig, "file"> = {
  externalUrl: "",
  listen: { host: "127.0.0.1", port: 8080 },
  tls: null,
  storage: { backend: "embedded", boltPath: "/data/svc/state.db", auditLogRetentionDays: 365 },
  database: { uri: "", database: "svc" },
  security: { cors: { allowedOrigins: [] } },
  bootstrap: { adminToken: "" },
  http: { maxBodyBytes: 1048576, trustedProxies: [], maxConnections: 100000, idleTimeoutSeconds: 10 },
  rateLimit: {
    api: { perSecond: 100, burst: 500 },
    authFailures: { perSecond: 20, burst: 1000 },
    enrollment: { perSecond: 20, burst: 1000 },
    passwords: { perSecond: 2, burst: 20 },
    loginFailures: { perSecond: 0.1, burst: 10 },
  },
  downloads: { dir: "/usr/share/svc-server/downloads" },
  opamp: { maxConnections: 50000, maxConcurrentRequests: 1000, heartbeatSeconds: null },
  metrics: { listen: null },
  webhooks: { offlineMinutes: 5, stalledMinutes: 10, tokenExpiringHours: 24, allowPrivateTargets: false },
  secrets: { key: "", keyFile: "" },
  logging: { level: "info" },
  smtp: null,
  fleet: { trustedAttributes: [] },
  sources: { hostPaths: { allowedPrefixes: ["/var/log", "/var/lib/docker/containers", "/opt"], denyPatterns: [] } },
};

describe("defaults", () => {
  test("every key has its default when nothing is set", () => {
    expect(load()).toEqual({ ...DEFAULTS, file: null });
  });

  test("the key table holds the documented defaults", () => {
    expect(KEYS.externalUrl.default).toBe("");
    expect(KEYS.listen.default).toBe("127.0.0.1:8080");
    expect(KEYS["storage.backend"].default).toBe("embedded");
    expect(KEYS["storage.boltPath"].default).toBe("/data/svc/state.db");
    expect(KEYS["storage.auditLogRetentionDays"].default).toBe(365);
    expect(KEYS["database.database"].default).toBe("svc");
    expect(KEYS["security.cors.allowedOrigins"].default).toEqual([]);
    expect(KEYS["http.maxBodyBytes"].default).toBe(1048576);
    expect(KEYS["logging.level"].default).toBe("info");
    expect(KEYS["smtp.port"].default).toBe(587);
    expect(KEYS["smtp.secure"].default).toBe(false);
  });

  test("an empty file gives the defaults and records the file", () => {
    expect(load({ path: fixture("empty.yaml") })).toEqual({ ...DEFAULTS, file: fixture("empty.yaml") });
  });

  test("a file of comments only gives the defaults", () => {
    expect(load({ path: fixture("comments-only.yaml") })).toEqual({ ...DEFAULTS, file: fixture("comments-only.yaml") });
  });

  test("caller defaults replace the built-in ones and are still overridden by the environment", () => {
    const config = load({ defaults: { "storage.boltPath": "./svc-state.db", listen: "127.0.0.1:9999" }, env: { SVC_LISTEN: "0.0.0.0:1" } });
    expect(config.storage.boltPath).toBe("./svc-state.db");
    expect(config.listen).toEqual({ host: "0.0.0.0", port: 1 });
  });

  test.skipIf(existsSync(DEFAULT_CONFIG_PATH))("an undefined path reads no file when the default path is absent", () => {
    expect(loadConfig({ env: {} }).file).toBeNull();
  });
});

describe("the file", () => {
  test("full.yaml sets every key in the key table", () => {
    const flatten = (value: unknown, prefix = ""): string[] =>
      value !== null && typeof value === "object" && !Array.isArray(value)
        ? Object.entries(value).flatMap(([k, v]) => flatten(v, prefix + k + "."))
        : [prefix.slice(0, -1)];
    const keys = flatten(parse(readFileSync(fixture("full.yaml"), "utf8")));
    expect(keys.sort()).toEqual(Object.keys(KEYS).sort());
  });

  test("full.yaml is read into the result shape", () => {
    const config = fromRepoRoot(() => load({ path: fixture("full.yaml") }));
    expect(config).toEqual({
      externalUrl: "https://svc.example.com",
      listen: { host: "0.0.0.0", port: 8443 },
      tls: { certFile: "server/config/testdata/tls/cert.pem", keyFile: "server/config/testdata/tls/key.pem" },
      storage: { backend: "external", boltPath: "/var/lib/svc/state.db", auditLogRetentionDays: 90 },
      database: {
        uri: "mongodb://svc:s3cret@docdb-0.example.com:27017,docdb-1.example.com:27017/fleet?replicaSet=rs0",
        database: "fleet",
      },
      security: { cors: { allowedOrigins: ["https://console.example.com", "http://localhost:3000"] } },
      bootstrap: { adminToken: TOKEN },
      http: { maxBodyBytes: 2097152, trustedProxies: ["10.0.0.5"], maxConnections: 20000, idleTimeoutSeconds: 30 },
      rateLimit: {
        api: { perSecond: 100, burst: 400 },
        authFailures: { perSecond: 5, burst: 100 },
        enrollment: { perSecond: 10, burst: 200 },
        passwords: { perSecond: 3, burst: 30 },
        loginFailures: { perSecond: 0.2, burst: 5 },
      },
      downloads: { dir: "/srv/svc/downloads" },
      opamp: { maxConnections: 20000, maxConcurrentRequests: 200, heartbeatSeconds: 60 },
      metrics: { listen: { host: "127.0.0.1", port: 9464 } },
      webhooks: { offlineMinutes: 15, stalledMinutes: 30, tokenExpiringHours: 72, allowPrivateTargets: true },
      secrets: { key: SECRETS_KEY, keyFile: "server/config/testdata/secrets.key" },
      logging: { level: "debug" },
      smtp: { host: "mail.example.com", port: 465, secure: true, user: "svc", password: "smtp-p@ss", from: "svc <svc@example.com>" },
      fleet: { trustedAttributes: ["host.name", "os.type"] },
      sources: { hostPaths: { allowedPrefixes: ["/var/log", "/srv/app/logs"], denyPatterns: ["*.sqlite"] } },
      file: fixture("full.yaml"),
    });
  });

  test("a file that does not exist is a problem naming the path", () => {
    const missing = fixture("does-not-exist.yaml");
    const problem = problemFor(
      problemsOf(() => load({ path: missing })),
      "--config",
    );
    expect(problem.source).toBe(missing);
    expect(problem.message).toContain("cannot read");
  });

  test("a directory is not a config file", () => {
    const problem = problemFor(
      problemsOf(() => load({ path: TESTDATA })),
      "--config",
    );
    expect(problem.source).toBe(TESTDATA);
  });

  test("unknown keys are all reported with their full dotted path and line", () => {
    const name = "unknown-key.yaml";
    const problems = problemsOf(() => load({ path: fixture(name) }));
    expect(problems).toEqual([
      { key: "storage.bolt_path", source: at(name, "bolt_path"), message: "unknown key" },
      { key: "nope", source: at(name, "nope"), message: "unknown key" },
      { key: "security.cors.allowed_origins", source: at(name, "allowed_origins"), message: "unknown key" },
    ]);
    // Pin the line arithmetic itself once, not only through lineOf.
    expect(problems[0]!.source).toBe(`${fixture(name)} line 4`);
  });

  test("a scalar or list where a mapping is expected is an error naming the section", () => {
    const name = "not-a-section.yaml";
    const problems = problemsOf(() => load({ path: fixture(name) }));
    expect(problems).toEqual([
      { key: "storage", source: at(name, "storage: 5"), message: "must be a mapping of keys" },
      { key: "security.cors", source: at(name, "cors:"), message: "must be a mapping of keys" },
    ]);
  });

  test("a file whose top level is not a mapping is an error", () => {
    const problem = problemFor(
      problemsOf(() => load({ path: fixture("not-a-map.yaml") })),
      "(root)",
    );
    expect(problem.source).toBe(at("not-a-map.yaml", "- listen"));
    expect(problem.message).toContain("mapping");
  });

  test("values of the wrong type are all reported at once with their lines", () => {
    const name = "bad-types.yaml";
    const problems = problemsOf(() => load({ path: fixture(name) }));
    expect(problems.map((p) => p.key).sort()).toEqual(
      ["http.maxBodyBytes", "listen", "logging.level", "security.cors.allowedOrigins", "storage.auditLogRetentionDays", "storage.backend"].sort(),
    );
    const expectations: [string, string, string][] = [
      ["listen", "listen: 8080", "must be a string"],
      ["storage.backend", "backend: cloud", 'must be one of "embedded", "external"'],
      ["storage.auditLogRetentionDays", "auditLogRetentionDays", "must be a whole number"],
      ["http.maxBodyBytes", "maxBodyBytes", "must be a whole number"],
      ["security.cors.allowedOrigins", "allowedOrigins", "must be a list of strings"],
      ["logging.level", "level: loud", "must be one of"],
    ];
    for (const [key, text, message] of expectations) {
      const problem = problemFor(problems, key);
      expect(problem.source).toBe(at(name, text));
      expect(problem.message).toContain(message);
    }
    // A non-secret value is quoted back so the operator sees what was read.
    expect(problemFor(problems, "logging.level").message).toContain('(got "loud")');
  });

  test("a YAML syntax error is reported with its line", () => {
    const problem = problemFor(
      problemsOf(() => load({ path: fixture("syntax-error.yaml") })),
      "(yaml)",
    );
    expect(problem.source).toBe(at("syntax-error.yaml", " format: json"));
  });

  test("a tab used for indentation is reported with its line", () => {
    const problem = problemFor(
      problemsOf(() => load({ path: fixture("tab-indent.yaml") })),
      "(yaml)",
    );
    expect(problem.source).toBe(`${fixture("tab-indent.yaml")} line 2`);
    expect(problem.message).toContain("Tabs");
  });

  test("a duplicate key is reported at the second occurrence", () => {
    const problem = problemFor(
      problemsOf(() => load({ path: fixture("duplicate-key.yaml") })),
      "(yaml)",
    );
    expect(problem.source).toBe(`${fixture("duplicate-key.yaml")} line 4`);
    expect(problem.message).toContain("unique");
  });

  test("several YAML documents in one file are refused", () => {
    const problem = problemFor(
      problemsOf(() => load({ path: fixture("multi-document.yaml") })),
      "(yaml)",
    );
    expect(problem.source).toContain(fixture("multi-document.yaml"));
    expect(problem.message).toContain("multiple documents");
  });

  test("an alias bomb is refused, not expanded", () => {
    // Refused by the alias count while resolving: expanding 9^9 strings would instead run out of memory or time.
    const problem = problemFor(
      problemsOf(() => load({ path: fixture("alias-bomb.yaml") })),
      "(yaml)",
    );
    expect(problem.source).toContain(fixture("alias-bomb.yaml"));
    expect(problem.message).toContain("alias");
  });

  test("ordinary anchors and aliases are followed", () => {
    const config = load({ path: fixture("anchors.yaml") });
    expect(config.externalUrl).toBe("https://svc.example.com");
    expect(config.security.cors.allowedOrigins).toEqual(["https://svc.example.com", "http://localhost:3000"]);
  });
});

describe("one /etc/svc/config.yaml shared with the agent", () => {
  test("the server's top-level sections in shared/host-config.ts are exactly those of its keys", () => {
    const sections = [...new Set(Object.keys(KEYS).map((key) => key.split(".")[0]!))];
    expect([...HOST_CONFIG_SECTIONS.server].sort()).toEqual(sections.sort());
  });

  // agent/config.test.ts loads the same file in the agent.
  test("a file holding both programs' sections loads in the server", () => {
    const config = load({ path: fixture("shared-host.yaml") });
    expect(config.externalUrl).toBe("https://svc.example.com");
    expect(config.listen).toEqual({ host: "0.0.0.0", port: 443 });
    expect(config.storage.auditLogRetentionDays).toBe(30);
    expect(config.http.trustedProxies).toEqual(["10.0.0.1"]);
    expect(config.logging.level).toBe("warn");
  });

  test("the agent's sections are not checked here; the server's own keys and keys neither documents still are", () => {
    const name = "shared-host-bad.yaml";
    expect(foreignSections("server")).toEqual(expect.arrayContaining(["server", "collectors", "browse"]));
    expect(problemsOf(() => load({ path: fixture(name) }))).toEqual([
      { key: "metricz", source: at(name, "metricz:"), message: "unknown key" },
      { key: "logging.format", source: at(name, "format: json"), message: "unknown key" },
      { key: "listen", source: at(name, "listen: nowhere"), message: 'must be host:port, for example 0.0.0.0:443 or 127.0.0.1:8080 (got "nowhere")' },
    ]);
  });
});

describe("environment variables", () => {
  test("the canonical name is SVC_, dots to underscores, upper-cased", () => {
    expect(Object.fromEntries(Object.keys(KEYS).map((key) => [key, envName(key)]))).toEqual({
      externalUrl: "SVC_EXTERNALURL",
      "fleet.trustedAttributes": "SVC_FLEET_TRUSTEDATTRIBUTES",
      listen: "SVC_LISTEN",
      "tls.certFile": "SVC_TLS_CERTFILE",
      "tls.keyFile": "SVC_TLS_KEYFILE",
      "storage.backend": "SVC_STORAGE_BACKEND",
      "storage.boltPath": "SVC_STORAGE_BOLTPATH",
      "storage.auditLogRetentionDays": "SVC_STORAGE_AUDITLOGRETENTIONDAYS",
      "database.uri": "SVC_DATABASE_URI",
      "database.server": "SVC_DATABASE_SERVER",
      "database.user": "SVC_DATABASE_USER",
      "database.password": "SVC_DATABASE_PASSWORD",
      "database.database": "SVC_DATABASE_DATABASE",
      "security.cors.allowedOrigins": "SVC_SECURITY_CORS_ALLOWEDORIGINS",
      "bootstrap.adminToken": "SVC_BOOTSTRAP_ADMINTOKEN",
      "http.maxBodyBytes": "SVC_HTTP_MAXBODYBYTES",
      "http.trustedProxies": "SVC_HTTP_TRUSTEDPROXIES",
      "http.maxConnections": "SVC_HTTP_MAXCONNECTIONS",
      "http.idleTimeoutSeconds": "SVC_HTTP_IDLETIMEOUTSECONDS",
      "rateLimit.api.perSecond": "SVC_RATELIMIT_API_PERSECOND",
      "rateLimit.api.burst": "SVC_RATELIMIT_API_BURST",
      "rateLimit.authFailures.perSecond": "SVC_RATELIMIT_AUTHFAILURES_PERSECOND",
      "rateLimit.authFailures.burst": "SVC_RATELIMIT_AUTHFAILURES_BURST",
      "rateLimit.enrollment.perSecond": "SVC_RATELIMIT_ENROLLMENT_PERSECOND",
      "rateLimit.enrollment.burst": "SVC_RATELIMIT_ENROLLMENT_BURST",
      "rateLimit.passwords.perSecond": "SVC_RATELIMIT_PASSWORDS_PERSECOND",
      "rateLimit.passwords.burst": "SVC_RATELIMIT_PASSWORDS_BURST",
      "rateLimit.loginFailures.perMinute": "SVC_RATELIMIT_LOGINFAILURES_PERMINUTE",
      "rateLimit.loginFailures.burst": "SVC_RATELIMIT_LOGINFAILURES_BURST",
      "downloads.dir": "SVC_DOWNLOADS_DIR",
      "opamp.maxConnections": "SVC_OPAMP_MAXCONNECTIONS",
      "opamp.maxConcurrentRequests": "SVC_OPAMP_MAXCONCURRENTREQUESTS",
      "opamp.heartbeatSeconds": "SVC_OPAMP_HEARTBEATSECONDS",
      "metrics.listen": "SVC_METRICS_LISTEN",
      "webhooks.offlineMinutes": "SVC_WEBHOOKS_OFFLINEMINUTES",
      "webhooks.stalledMinutes": "SVC_WEBHOOKS_STALLEDMINUTES",
      "webhooks.tokenExpiringHours": "SVC_WEBHOOKS_TOKENEXPIRINGHOURS",
      "webhooks.allowPrivateTargets": "SVC_WEBHOOKS_ALLOWPRIVATETARGETS",
      "secrets.keyFile": "SVC_SECRETS_KEYFILE",
      "secrets.key": "SVC_SECRETS_KEY",
      "logging.level": "SVC_LOGGING_LEVEL",
      "smtp.host": "SVC_SMTP_HOST",
      "smtp.port": "SVC_SMTP_PORT",
      "smtp.secure": "SVC_SMTP_SECURE",
      "smtp.user": "SVC_SMTP_USER",
      "smtp.password": "SVC_SMTP_PASSWORD",
      "smtp.from": "SVC_SMTP_FROM",
      "sources.hostPaths.allowedPrefixes": "SVC_SOURCES_HOSTPATHS_ALLOWEDPREFIXES",
      "sources.hostPaths.denyPatterns": "SVC_SOURCES_HOSTPATHS_DENYPATTERNS",
    });
  });

  test("the aliases are the documented ones, in precedence order", () => {
    const aliases = Object.fromEntries(
      Object.entries(KEYS)
        .filter(([, spec]) => "aliases" in spec)
        .map(([key, spec]) => [key, (spec as { aliases: string[] }).aliases]),
    );
    expect(aliases).toEqual({
      externalUrl: ["EXTERNAL_URL"],
      "database.uri": ["DATABASE_URI", "DOCDB_URI"],
      "database.server": ["DOCDB_SERVER"],
      "database.user": ["DOCDB_USER"],
      "database.password": ["DOCDB_PASSWORD"],
    });
  });

  test("every key is read from its canonical variable", () => {
    const config = load({
      env: {
        SVC_EXTERNALURL: "https://env.example.com/",
        SVC_LISTEN: "0.0.0.0:443",
        SVC_TLS_CERTFILE: CERT,
        SVC_TLS_KEYFILE: KEY,
        SVC_STORAGE_BACKEND: "external",
        SVC_STORAGE_BOLTPATH: "/srv/state.db",
        SVC_STORAGE_AUDITLOGRETENTIONDAYS: "30",
        SVC_DATABASE_SERVER: "db.example.com:27017",
        SVC_DATABASE_USER: "svc",
        SVC_DATABASE_PASSWORD: "pw",
        SVC_DATABASE_DATABASE: "fleet",
        SVC_SECURITY_CORS_ALLOWEDORIGINS: "https://a.example.com, https://b.example.com:8443/",
        SVC_BOOTSTRAP_ADMINTOKEN: TOKEN,
        SVC_HTTP_MAXBODYBYTES: "4096",
        SVC_DOWNLOADS_DIR: "/opt/svc/downloads",
        SVC_OPAMP_MAXCONNECTIONS: "10",
        SVC_OPAMP_MAXCONCURRENTREQUESTS: "5",
        SVC_OPAMP_HEARTBEATSECONDS: "15",
        SVC_METRICS_LISTEN: "[::1]:9100",
        SVC_WEBHOOKS_OFFLINEMINUTES: "2",
        SVC_WEBHOOKS_STALLEDMINUTES: "3",
        SVC_WEBHOOKS_TOKENEXPIRINGHOURS: "4",
        SVC_WEBHOOKS_ALLOWPRIVATETARGETS: "true",
        SVC_SECRETS_KEY: SECRETS_KEY,
        SVC_LOGGING_LEVEL: "warn",
        SVC_SMTP_HOST: "127.0.0.1",
        SVC_SMTP_PORT: "2525",
        SVC_SMTP_SECURE: "false",
        SVC_SMTP_USER: "mailer",
        SVC_SMTP_PASSWORD: "mail-pw",
        SVC_SMTP_FROM: "svc@example.com",
        SVC_SOURCES_HOSTPATHS_ALLOWEDPREFIXES: "/var/log,/data/logs",
        SVC_SOURCES_HOSTPATHS_DENYPATTERNS: "*.db",
        SVC_FLEET_TRUSTEDATTRIBUTES: "host.name",
      },
    });
    expect(config).toEqual({
      externalUrl: "https://env.example.com",
      listen: { host: "0.0.0.0", port: 443 },
      tls: { certFile: CERT, keyFile: KEY },
      storage: { backend: "external", boltPath: "/srv/state.db", auditLogRetentionDays: 30 },
      database: { uri: "mongodb://svc:pw@db.example.com:27017/fleet", database: "fleet" },
      security: { cors: { allowedOrigins: ["https://a.example.com", "https://b.example.com:8443"] } },
      bootstrap: { adminToken: TOKEN },
      http: { ...DEFAULTS.http, maxBodyBytes: 4096, trustedProxies: [] },
      rateLimit: DEFAULTS.rateLimit,
      downloads: { dir: "/opt/svc/downloads" },
      opamp: { maxConnections: 10, maxConcurrentRequests: 5, heartbeatSeconds: 15 },
      metrics: { listen: { host: "::1", port: 9100 } },
      webhooks: { offlineMinutes: 2, stalledMinutes: 3, tokenExpiringHours: 4, allowPrivateTargets: true },
      secrets: { key: SECRETS_KEY, keyFile: "" },
      logging: { level: "warn" },
      smtp: { host: "127.0.0.1", port: 2525, secure: false, user: "mailer", password: "mail-pw", from: "svc@example.com" },
      fleet: { trustedAttributes: ["host.name"] },
      sources: { hostPaths: { allowedPrefixes: ["/var/log", "/data/logs"], denyPatterns: ["*.db"] } },
      file: null,
    });
  });

  test("SVC_DATABASE_URI sets the connection string as given", () => {
    expect(load({ env: { SVC_DATABASE_URI: "postgres://svc@pg.example.com/svc" } }).database.uri).toBe("postgres://svc@pg.example.com/svc");
  });

  test("a comma-separated list drops blanks and spaces", () => {
    const config = load({ env: { SVC_SECURITY_CORS_ALLOWEDORIGINS: " https://a.example.com ,, http://localhost:3000 ," } });
    expect(config.security.cors.allowedOrigins).toEqual(["https://a.example.com", "http://localhost:3000"]);
  });

  test("a list item that is not an origin is an error naming the variable", () => {
    const problems = problemsOf(() => load({ env: { SVC_SECURITY_CORS_ALLOWEDORIGINS: "https://a.example.com,https://b.example.com/app" } }));
    const problem = problemFor(problems, "security.cors.allowedOrigins");
    expect(problem.source).toBe("environment variable SVC_SECURITY_CORS_ALLOWEDORIGINS");
    expect(problem.message).toContain("https://b.example.com/app");
  });

  test("fleet.trustedAttributes may not name svc's own attributes: an error naming the key and the value", () => {
    const problems = problemsOf(() => load({ env: { SVC_FLEET_TRUSTEDATTRIBUTES: "host.name,environment" } }));
    const problem = problemFor(problems, "fleet.trustedAttributes");
    expect(problem.source).toBe("environment variable SVC_FLEET_TRUSTEDATTRIBUTES");
    expect(problem.message).toContain('"environment"');
    expect(
      problemFor(
        problemsOf(() => load({ env: { SVC_FLEET_TRUSTEDATTRIBUTES: "collector.name" } })),
        "fleet.trustedAttributes",
      ).message,
    ).toContain("svc's own");
  });

  test("unknown SVC_ variables are problems; SVC_TEST_ ones and other prefixes are not", () => {
    const problems = problemsOf(() =>
      load({ env: { SVC_NOPE: "1", SVC_STORAGE_BOLT_PATH: "/x", SVC_TEST_PORT: "1", SVC_TEST_: "", HOME: "/root", svc_listen: "x" } }),
    );
    expect(problems).toEqual([
      { key: "SVC_NOPE", source: "environment variable SVC_NOPE", message: "no configuration key has this variable" },
      { key: "SVC_STORAGE_BOLT_PATH", source: "environment variable SVC_STORAGE_BOLT_PATH", message: "no configuration key has this variable" },
    ]);
  });

  test("an empty variable counts as unset", () => {
    expect(load({ env: { SVC_LISTEN: "", SVC_EXTERNALURL: "", EXTERNAL_URL: "https://alias.example.com" } })).toMatchObject({
      listen: DEFAULTS.listen,
      externalUrl: "https://alias.example.com",
    });
  });
});

describe("precedence: canonical SVC_ variable > alias > file > default", () => {
  const file = fixture("precedence.yaml");

  test("externalUrl at each level", () => {
    expect(load().externalUrl).toBe("");
    expect(load({ path: file }).externalUrl).toBe("https://file.example.com");
    expect(load({ path: file, env: { EXTERNAL_URL: "https://alias.example.com" } }).externalUrl).toBe("https://alias.example.com");
    expect(load({ path: file, env: { EXTERNAL_URL: "https://alias.example.com", SVC_EXTERNALURL: "https://canonical.example.com" } }).externalUrl).toBe(
      "https://canonical.example.com",
    );
  });

  test("listen: the variable beats the file", () => {
    expect(load({ path: file }).listen).toEqual({ host: "0.0.0.0", port: 7000 });
    expect(load({ path: file, env: { SVC_LISTEN: "127.0.0.1:7001" } }).listen).toEqual({ host: "127.0.0.1", port: 7001 });
  });

  test("an overridden file value is not checked: only the effective value is", () => {
    const config = load({
      path: fixture("bad-types.yaml"),
      env: {
        SVC_LISTEN: "0.0.0.0:1",
        SVC_STORAGE_BACKEND: "embedded",
        SVC_STORAGE_AUDITLOGRETENTIONDAYS: "7",
        SVC_HTTP_MAXBODYBYTES: "2048",
        SVC_SECURITY_CORS_ALLOWEDORIGINS: "https://a.example.com",
        SVC_LOGGING_LEVEL: "error",
      },
    });
    expect(config.logging.level).toBe("error");
    expect(config.storage.auditLogRetentionDays).toBe(7);
  });

  test("database.uri at each level, with DATABASE_URI before DOCDB_URI", () => {
    expect(load().database.uri).toBe("");
    // The file's uri wins over the file's server.
    expect(load({ path: file }).database.uri).toBe("mongodb://file.example.com:27017");
    expect(load({ path: file, env: { DOCDB_URI: "mongodb://docdb.example.com" } }).database.uri).toBe("mongodb://docdb.example.com");
    expect(load({ path: file, env: { DOCDB_URI: "mongodb://docdb.example.com", DATABASE_URI: "mongodb://database.example.com" } }).database.uri).toBe(
      "mongodb://database.example.com",
    );
    expect(
      load({
        path: file,
        env: {
          DOCDB_URI: "mongodb://docdb.example.com",
          DATABASE_URI: "mongodb://database.example.com",
          SVC_DATABASE_URI: "mongodb://canonical.example.com",
        },
      }).database.uri,
    ).toBe("mongodb://canonical.example.com");
  });

  test("DOCDB_SERVER, DOCDB_USER and DOCDB_PASSWORD build the URI, escaped", () => {
    const config = load({
      env: { SVC_STORAGE_BACKEND: "external", SVC_SECRETS_KEY: SECRETS_KEY, DOCDB_SERVER: "db.example.com", DOCDB_USER: "svc", DOCDB_PASSWORD: "p@ss:w/rd" },
    });
    expect(config.database.uri).toBe("mongodb+srv://svc:p%40ss%3Aw%2Frd@db.example.com/svc");
  });

  test("canonical database parts beat the DOCDB_ aliases", () => {
    const config = load({
      env: {
        DOCDB_SERVER: "alias.example.com",
        SVC_DATABASE_SERVER: "canonical.example.com:27017",
        DOCDB_USER: "alias",
        SVC_DATABASE_USER: "canonical",
        DOCDB_PASSWORD: "alias",
        SVC_DATABASE_PASSWORD: "canonical",
      },
    });
    expect(config.database.uri).toBe("mongodb://canonical:canonical@canonical.example.com:27017/svc");
  });

  test("a uri from an alias still beats a server from the canonical variable", () => {
    const config = load({ env: { DOCDB_URI: "mongodb://uri.example.com", SVC_DATABASE_SERVER: "server.example.com" } });
    expect(config.database.uri).toBe("mongodb://uri.example.com");
  });

  test("a problem names the level the effective value came from", () => {
    const fromFile = problemFor(
      problemsOf(() => load({ path: fixture("bad-types.yaml") })),
      "listen",
    );
    expect(fromFile.source).toBe(at("bad-types.yaml", "listen:"));
    const fromAlias = problemFor(
      problemsOf(() => load({ env: { EXTERNAL_URL: "ftp://x" } })),
      "externalUrl",
    );
    expect(fromAlias.source).toBe("environment variable EXTERNAL_URL");
    const fromCanonical = problemFor(
      problemsOf(() => load({ env: { EXTERNAL_URL: "https://ok.example.com", SVC_EXTERNALURL: "ftp://x" } })),
      "externalUrl",
    );
    expect(fromCanonical.source).toBe("environment variable SVC_EXTERNALURL");
    const fromDefault = problemFor(
      problemsOf(() => load({ defaults: { listen: "nope" } })),
      "listen",
    );
    expect(fromDefault.source).toBe("default");
  });
});

describe("storage.auditLogRetentionDays", () => {
  test("0 means 365", () => {
    expect(load({ path: fixture("zero-retention.yaml") }).storage.auditLogRetentionDays).toBe(365);
    expect(load({ env: { SVC_STORAGE_AUDITLOGRETENTIONDAYS: "0" } }).storage.auditLogRetentionDays).toBe(365);
  });

  test("a negative number is an error from the file", () => {
    const problem = problemFor(
      problemsOf(() => load({ path: fixture("negative-retention.yaml") })),
      "storage.auditLogRetentionDays",
    );
    expect(problem.source).toBe(`${fixture("negative-retention.yaml")} line 2`);
    expect(problem.message).toContain("at least 0");
  });

  test("a negative number is an error from the environment", () => {
    const problem = problemFor(
      problemsOf(() => load({ env: { SVC_STORAGE_AUDITLOGRETENTIONDAYS: "-1" } })),
      "storage.auditLogRetentionDays",
    );
    expect(problem.source).toBe("environment variable SVC_STORAGE_AUDITLOGRETENTIONDAYS");
  });
});

describe("int values from the environment", () => {
  test('"30" is converted to a number', () => {
    expect(load({ env: { SVC_STORAGE_AUDITLOGRETENTIONDAYS: "30" } }).storage.auditLogRetentionDays).toBe(30);
    expect(load({ env: { SVC_HTTP_MAXBODYBYTES: " 2048 " } }).http.maxBodyBytes).toBe(2048);
  });

  test.each(["abc", "1.5", "30days", "1e3", "99999999999999999999"])("%p is an error naming the key and variable", (value) => {
    const problem = problemFor(
      problemsOf(() => load({ env: { SVC_STORAGE_AUDITLOGRETENTIONDAYS: value } })),
      "storage.auditLogRetentionDays",
    );
    expect(problem.source).toBe("environment variable SVC_STORAGE_AUDITLOGRETENTIONDAYS");
    expect(problem.message).toBe("must be a whole number");
  });

  test("http.trustedProxies takes IP addresses only", () => {
    expect(load({ env: { SVC_HTTP_TRUSTEDPROXIES: "10.0.0.5, ::1" } }).http.trustedProxies).toEqual(["10.0.0.5", "::1"]);
    const problem = problemFor(
      problemsOf(() => load({ env: { SVC_HTTP_TRUSTEDPROXIES: "10.0.0.0/8" } })),
      "http.trustedProxies",
    );
    expect(problem.message).toContain('"10.0.0.0/8" is not an IP address');
  });

  test("http.maxBodyBytes below 1024 is an error", () => {
    const problem = problemFor(
      problemsOf(() => load({ env: { SVC_HTTP_MAXBODYBYTES: "100" } })),
      "http.maxBodyBytes",
    );
    expect(problem.message).toContain("at least 1024");
  });

  test("a quoted number in the file is a string, not an int", () => {
    // Only the environment, where everything is text, converts strings.
    const problems = problemsOf(() => load({ path: fixture("bad-types.yaml") }));
    expect(problemFor(problems, "storage.auditLogRetentionDays").message).toBe("must be a whole number");
  });
});

describe("externalUrl", () => {
  test.each([
    ["https://svc.example.com/", "https://svc.example.com"],
    ["https://svc.example.com", "https://svc.example.com"],
    ["http://10.0.0.5:8080/", "http://10.0.0.5:8080"],
    ["http://[::1]:8080", "http://[::1]:8080"],
  ])("%p is accepted as %p", (value, expected) => {
    expect(load({ env: { SVC_EXTERNALURL: value } }).externalUrl).toBe(expected);
  });

  test.each([
    ["ftp://x", "http or https"],
    ["svc.example.com", "absolute URL"],
    ["svc.example.com:443", "http or https"],
    ["https:svc.example.com", "absolute URL"],
    ["https://x/path", "no path"],
    ["https://x/path/", "no path"],
    ["https://x//", "no path"],
    ["https://x?a=1", "no path, query"],
    ["https://x/?", "no path, query"],
    ["https://x#top", "fragment"],
    ["https://x/#", "fragment"],
    ["https://x\\", "no path"],
    ["https://user:pw@x", "user name or password"],
  ])("%p is an error naming externalUrl", (value, message) => {
    const problem = problemFor(
      problemsOf(() => load({ env: { SVC_EXTERNALURL: value } })),
      "externalUrl",
    );
    expect(problem.source).toBe("environment variable SVC_EXTERNALURL");
    expect(problem.message).toContain(message);
  });
});

describe("listen", () => {
  test.each([
    ["0.0.0.0:443", "0.0.0.0", 443],
    ["[::1]:8080", "::1", 8080],
    ["[::]:443", "::", 443],
    ["localhost:0", "localhost", 0],
    ["svc.internal:65535", "svc.internal", 65535],
  ])("%p is host %p port %p", (value, host, port) => {
    expect(load({ env: { SVC_LISTEN: value } }).listen).toEqual({ host, port });
  });

  test.each(["8080", "host:99999", "host:65536", "host:", ":8080", "::1:8080", "host:80x", "host 1:80", "[::1]8080"])(
    "%p is an error naming listen",
    (value) => {
      const problem = problemFor(
        problemsOf(() => load({ env: { SVC_LISTEN: value } })),
        "listen",
      );
      expect(problem.source).toBe("environment variable SVC_LISTEN");
      expect(problem.message).toContain(JSON.stringify(value));
    },
  );
});

describe("metrics.listen", () => {
  test("unset by default: /metrics only on the main listener", () => {
    expect(KEYS["metrics.listen"].default).toBe("");
    expect(load().metrics.listen).toBeNull();
  });

  test.each([
    ["127.0.0.1:9464", "127.0.0.1", 9464],
    ["[::]:9100", "::", 9100],
  ])("%p is host %p port %p", (value, host, port) => {
    expect(load({ env: { SVC_METRICS_LISTEN: value } }).metrics.listen).toEqual({ host, port });
  });

  test.each(["9464", "host:", "host:70000"])("%p is an error naming metrics.listen", (value) => {
    const problem = problemFor(
      problemsOf(() => load({ env: { SVC_METRICS_LISTEN: value } })),
      "metrics.listen",
    );
    expect(problem.source).toBe("environment variable SVC_METRICS_LISTEN");
  });
});

describe("tls", () => {
  test("is null unless set", () => {
    expect(load().tls).toBeNull();
  });

  test("both files from the file", () => {
    const config = fromRepoRoot(() => load({ path: fixture("tls.yaml") }));
    expect(config.tls).toEqual({ certFile: "server/config/testdata/tls/cert.pem", keyFile: "server/config/testdata/tls/key.pem" });
  });

  test("both files from the environment", () => {
    expect(load({ env: { SVC_TLS_CERTFILE: CERT, SVC_TLS_KEYFILE: KEY } }).tls).toEqual({ certFile: CERT, keyFile: KEY });
  });

  test("certFile without keyFile names keyFile and points at where certFile was set", () => {
    const problems = problemsOf(() => fromRepoRoot(() => load({ path: fixture("tls-cert-only.yaml") })));
    const problem = problemFor(problems, "tls.keyFile");
    expect(problem.source).toBe(at("tls-cert-only.yaml", "certFile"));
    expect(problem.message).toContain("set together");
    expect(problems).toHaveLength(1);
  });

  test("keyFile without certFile names certFile", () => {
    const problem = problemFor(
      problemsOf(() => load({ env: { SVC_TLS_KEYFILE: KEY } })),
      "tls.certFile",
    );
    expect(problem.source).toBe("environment variable SVC_TLS_KEYFILE");
  });

  test("files that do not exist are both reported with their lines", () => {
    const name = "tls-missing-files.yaml";
    const problems = problemsOf(() => load({ path: fixture(name) }));
    expect(problems).toEqual([
      { key: "tls.certFile", source: at(name, "certFile"), message: "file /nonexistent/svc/cert.pem does not exist" },
      { key: "tls.keyFile", source: at(name, "keyFile"), message: "file /nonexistent/svc/key.pem does not exist" },
    ]);
  });

  test("relative paths resolve from the working directory", () => {
    // From the test directory the fixture's repository-relative paths do not exist.
    const problems = problemsOf(() => {
      const cwd = process.cwd();
      process.chdir(TESTDATA);
      try {
        return load({ path: fixture("tls.yaml") });
      } finally {
        process.chdir(cwd);
      }
    });
    expect(problems.map((p) => p.key)).toEqual(["tls.certFile", "tls.keyFile"]);
  });
});

describe("the external database", () => {
  test("storage.backend external without uri or server is an error naming database.uri", () => {
    const problem = problemFor(
      problemsOf(() => load({ path: fixture("external-no-database.yaml") })),
      "database.uri",
    );
    expect(problem.message).toContain("database.uri or database.server");
    expect(problem.source).toBe("default");
  });

  test("the same from the environment", () => {
    const problem = problemFor(
      problemsOf(() => load({ env: { SVC_STORAGE_BACKEND: "external", DOCDB_USER: "svc" } })),
      "database.uri",
    );
    expect(problem.message).toContain("storage.backend is external");
  });

  test("the embedded backend needs no database", () => {
    expect(load({ env: { SVC_STORAGE_BACKEND: "embedded" } }).database.uri).toBe("");
  });

  test("an unknown backend is an error", () => {
    const problem = problemFor(
      problemsOf(() => load({ env: { SVC_STORAGE_BACKEND: "mongo" } })),
      "storage.backend",
    );
    expect(problem.source).toBe("environment variable SVC_STORAGE_BACKEND");
  });

  test.each(["mongodb://h", "mongodb+srv://h", "postgres://h/db", "postgresql://h/db"])("%p is accepted", (uri) => {
    expect(load({ env: { DATABASE_URI: uri, SVC_STORAGE_BACKEND: "external", SVC_SECRETS_KEY: SECRETS_KEY } }).database.uri).toBe(uri);
  });

  test.each(["mysql://admin:Hunter2@db.example.com/svc", "db.example.com", "MONGO://h"])("%p is an error naming database.uri", (uri) => {
    const problem = problemFor(
      problemsOf(() => load({ env: { DATABASE_URI: uri } })),
      "database.uri",
    );
    expect(problem.source).toBe("environment variable DATABASE_URI");
    expect(problem.message).toContain("must start with");
  });

  test("the database name is appended to a built URI", () => {
    expect(load({ env: { DOCDB_SERVER: "db.example.com:27017", SVC_DATABASE_DATABASE: "fleet" } }).database).toEqual({
      uri: "mongodb://db.example.com:27017/fleet",
      database: "fleet",
    });
  });
});

describe("the secrets key", () => {
  test("storage.backend external without a key refuses to start, naming secrets.keyFile and SVC_SECRETS_KEY", () => {
    const problem = problemFor(
      problemsOf(() => load({ env: { SVC_STORAGE_BACKEND: "external", SVC_DATABASE_URI: "postgres://h/db" } })),
      "secrets.keyFile",
    );
    expect(problem.message).toContain("SVC_SECRETS_KEY");
    expect(problem.source).toBe("environment variable SVC_STORAGE_BACKEND");
  });

  test("external with a key file or the key itself is accepted; embedded needs neither", () => {
    const env = { SVC_STORAGE_BACKEND: "external", SVC_DATABASE_URI: "postgres://h/db" };
    expect(load({ env: { ...env, SVC_SECRETS_KEYFILE: SECRETS_KEY_FILE } }).secrets).toEqual({ key: "", keyFile: SECRETS_KEY_FILE });
    expect(load({ env: { ...env, SVC_SECRETS_KEY: SECRETS_KEY } }).secrets).toEqual({ key: SECRETS_KEY, keyFile: "" });
    expect(load().secrets).toEqual({ key: "", keyFile: "" });
  });

  test.each([
    ["dGVzdA==", "base64 of 32"],
    ["not base64 at all!", "base64 of 32"],
  ])("SVC_SECRETS_KEY %p is refused without echoing it", (value, message) => {
    const problem = problemFor(
      problemsOf(() => load({ env: { SVC_SECRETS_KEY: value } })),
      "secrets.key",
    );
    expect(problem.message).toContain(message);
    expect(problem.message).not.toContain(value);
  });

  test("a key file that is missing or holds no key is an error naming secrets.keyFile", () => {
    const missing = problemFor(
      problemsOf(() => load({ env: { SVC_SECRETS_KEYFILE: "/nonexistent/secrets.key" } })),
      "secrets.keyFile",
    );
    expect(missing.message).toContain("cannot read the secrets key file /nonexistent/secrets.key");
    const wrong = problemFor(
      problemsOf(() => load({ env: { SVC_SECRETS_KEYFILE: CERT } })),
      "secrets.keyFile",
    );
    expect(wrong.message).toContain("must hold the base64 of 32 random bytes");
  });
});

describe("opamp.heartbeatSeconds", () => {
  test("unset (0) leaves each collector its own interval; a value is offered", () => {
    expect(load().opamp.heartbeatSeconds).toBeNull();
    expect(load({ env: { SVC_OPAMP_HEARTBEATSECONDS: "0" } }).opamp.heartbeatSeconds).toBeNull();
    expect(load({ env: { SVC_OPAMP_HEARTBEATSECONDS: "60" } }).opamp.heartbeatSeconds).toBe(60);
  });

  test.each(["-1", "86401"])("%p is an error naming the key", (value) => {
    const problem = problemFor(
      problemsOf(() => load({ env: { SVC_OPAMP_HEARTBEATSECONDS: value } })),
      "opamp.heartbeatSeconds",
    );
    expect(problem.message).toContain("between 1 and 86400");
  });
});

describe("secrets stay out of error messages", () => {
  /** Fails when the secret appears anywhere in the error. */
  function expectHidden(fn: () => unknown, secret: string): ConfigProblem[] {
    let thrown: unknown;
    try {
      fn();
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ConfigError);
    expect(String(thrown)).not.toContain(secret);
    expect((thrown as ConfigError).message).not.toContain(secret);
    expect(JSON.stringify((thrown as ConfigError).problems)).not.toContain(secret);
    return problemsOf(fn);
  }

  test("a valid admin token is accepted", () => {
    expect(load({ env: { SVC_BOOTSTRAP_ADMINTOKEN: TOKEN } }).bootstrap.adminToken).toBe(TOKEN);
    expect(load({ env: { SVC_BOOTSTRAP_ADMINTOKEN: "svcsa_" + "Z9".repeat(40) } }).bootstrap.adminToken).toHaveLength(86);
  });

  test.each([
    "svcsa_Short1Secret2",
    "svcsa_A1b2C3d4A1b2C3d4A1b2C3d4A1b2C3d", // 31 characters after the prefix
    "svcsa_A1b2C3d4A1b2C3d4A1b2C3d4A1b2-3d4",
    "ghp_A1b2C3d4A1b2C3d4A1b2C3d4A1b2C3d4",
    "SVCSA_A1b2C3d4A1b2C3d4A1b2C3d4A1b2C3d4",
  ])("a bad admin token %# is an error that does not contain it", (token) => {
    const problems = expectHidden(() => load({ env: { SVC_BOOTSTRAP_ADMINTOKEN: token } }), token.slice(6));
    const problem = problemFor(problems, "bootstrap.adminToken");
    expect(problem.source).toBe("environment variable SVC_BOOTSTRAP_ADMINTOKEN");
    expect(problem.message).toContain("svcsa_");
  });

  test("bad secrets from the file are named by key and line but not printed", () => {
    const name = "secrets.yaml";
    const fn = () => load({ path: fixture(name) });
    expectHidden(fn, "Hunter2FileSecret");
    const problems = expectHidden(fn, "FileTokenSecretValue");
    expect(problems.map((p) => p.key)).toEqual(["database.uri", "database.password", "bootstrap.adminToken"]);
    expect(problemFor(problems, "database.uri").source).toBe(at(name, "uri:"));
    expect(problemFor(problems, "database.password")).toEqual({ key: "database.password", source: at(name, "password:"), message: "must be a string" });
    expect(problemFor(problems, "bootstrap.adminToken").source).toBe(at(name, "adminToken:"));
  });

  test("a database password is not printed when the database settings are wrong", () => {
    const password = "Sup3rSecretDbPassword";
    expectHidden(() => load({ env: { SVC_STORAGE_BACKEND: "external", DOCDB_USER: "svc", DOCDB_PASSWORD: password } }), password);
    expectHidden(() => load({ env: { DATABASE_URI: `mysql://svc:${password}@db`, DOCDB_PASSWORD: password } }), password);
  });
});

describe("several problems", () => {
  test("are all reported at once, from the file and the environment", () => {
    const problems = problemsOf(() =>
      load({ path: fixture("unknown-key.yaml"), env: { SVC_LISTEN: "8080", SVC_LOGGING_LEVEL: "loud", SVC_NOPE: "1", EXTERNAL_URL: "ftp://x" } }),
    );
    expect(problems.map((p) => p.key).sort()).toEqual(
      ["storage.bolt_path", "nope", "security.cors.allowed_origins", "SVC_NOPE", "externalUrl", "listen", "logging.level"].sort(),
    );
    expect(problemFor(problems, "listen").source).toBe("environment variable SVC_LISTEN");
    expect(problemFor(problems, "nope").source).toBe(at("unknown-key.yaml", "nope"));
  });

  test("cross-key checks are reported together with value problems", () => {
    const problems = problemsOf(() => load({ env: { SVC_LISTEN: "8080", SVC_TLS_CERTFILE: "/nonexistent/cert.pem", SVC_STORAGE_BACKEND: "external" } }));
    expect(problems.map((p) => p.key).sort()).toEqual(["database.uri", "listen", "secrets.keyFile", "tls.certFile", "tls.keyFile"]);
  });

  test("a cross-key check is skipped when one of its keys is already wrong", () => {
    // The bad uri is reported once; "external needs a database" would only repeat it.
    const problems = problemsOf(() => load({ env: { SVC_STORAGE_BACKEND: "external", DATABASE_URI: "mysql://db", SVC_SECRETS_KEY: SECRETS_KEY } }));
    expect(problems.map((p) => p.key)).toEqual(["database.uri"]);
    expect(problems[0]!.message).toContain("must start with");
  });
});

describe("ConfigError", () => {
  test("is an Error with a name and a readable message", () => {
    const error = new ConfigError([
      { key: "listen", source: "environment variable SVC_LISTEN", message: "must be host:port" },
      { key: "nope", source: "/etc/svc/config.yaml line 3", message: "unknown key" },
    ]);
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe("ConfigError");
    expect(error.message).toBe("listen: must be host:port (environment variable SVC_LISTEN)\nnope: unknown key (/etc/svc/config.yaml line 3)");
  });
});

test("database.password without database.user is refused rather than dropped", () => {
  expect(() => loadConfig({ path: null, env: { SVC_DATABASE_SERVER: "db.example:27017", SVC_DATABASE_PASSWORD: "s3cret" } })).toThrow(
    /database.password: is set without database.user/,
  );
});

describe("smtp", () => {
  test("without smtp.host there is no mail, whatever else is set", () => {
    expect(load({ env: { SVC_SMTP_FROM: "svc@example.com", SVC_SMTP_PORT: "25" } }).smtp).toBeNull();
  });

  test("smtp.host without smtp.from is an error naming smtp.from", () => {
    const problem = problemFor(
      problemsOf(() => load({ env: { SVC_SMTP_HOST: "mail.example.com" } })),
      "smtp.from",
    );
    expect(problem.source).toBe("environment variable SVC_SMTP_HOST");
    expect(problem.message).toContain("smtp.host is set");
  });

  test.each([
    ["SVC_SMTP_HOST", "smtp://mail.example.com", "smtp.host"],
    ["SVC_SMTP_HOST", "mail.example.com:25", "smtp.host"],
    ["SVC_SMTP_PORT", "0", "smtp.port"],
    ["SVC_SMTP_PORT", "70000", "smtp.port"],
    ["SVC_SMTP_SECURE", "yes", "smtp.secure"],
    ["SVC_WEBHOOKS_ALLOWPRIVATETARGETS", "yes", "webhooks.allowPrivateTargets"],
    ["SVC_SMTP_FROM", "not an address", "smtp.from"],
  ])("%s=%s is refused, naming %s", (name, value, key) => {
    const env = { SVC_SMTP_HOST: "mail.example.com", SVC_SMTP_FROM: "svc@example.com", [name]: value };
    expect(
      problemFor(
        problemsOf(() => load({ env })),
        key,
      ).source,
    ).toBe(`environment variable ${name}`);
  });

  test("the defaults are port 587 without implicit TLS; an IPv6 host and a named From are accepted", () => {
    expect(load({ env: { SVC_SMTP_HOST: "::1", SVC_SMTP_FROM: "Fleet <fleet@example.com>" } }).smtp).toEqual({
      host: "::1",
      port: 587,
      secure: false,
      user: "",
      password: "",
      from: "Fleet <fleet@example.com>",
    });
  });

  test("a password without a user is refused and not printed", () => {
    const secret = "SmtpSecretValue123";
    const env = { SVC_SMTP_HOST: "mail.example.com", SVC_SMTP_FROM: "svc@example.com", SVC_SMTP_PASSWORD: secret };
    const problem = problemFor(
      problemsOf(() => load({ env })),
      "smtp.password",
    );
    expect(problem.message).toContain("smtp.user");
    expect(JSON.stringify(problem)).not.toContain(secret);
  });
});
