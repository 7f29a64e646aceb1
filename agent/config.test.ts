/**
 * The agent config validates itself and names the key: every test that
 * expects a failure checks the exact key of the problem, and that the error
 * message lists every problem as `key: message`.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { rerunUnprivileged, RERUN_TIMEOUT_MS } from "../test/unprivileged.ts";
import { foreignSections } from "../shared/host-config.ts";
import { AgentConfigError, ALWAYS_DENIED, loadAgentConfig, parseAgentConfig, type ParsedAgentConfig } from "./config.ts";
import type { AgentConfig, ConfigProblem } from "./types.ts";

const TOKEN = "svcen_" + "A1b2C3d4".repeat(5) + "xyz";
const MINIMAL = `server:\n  url: https://svc.example.com\n  token: ${TOKEN}\n`;

const dir = mkdtempSync(join(tmpdir(), "svc-agent-config-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function parse(extra = "", base = MINIMAL): ParsedAgentConfig {
  return parseAgentConfig(base + extra);
}

/** The AgentConfigError's problems; fails the test when parsing succeeds or throws something else. */
function problemsOf(fn: () => unknown): ConfigProblem[] {
  let thrown: unknown;
  try {
    fn();
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(AgentConfigError);
  const error = thrown as AgentConfigError;
  expect(error.problems.length).toBeGreaterThan(0);
  for (const problem of error.problems) {
    expect(problem.message).not.toBe("");
    expect(error.message).toContain(`${problem.key}: ${problem.message}`);
  }
  return error.problems;
}

/** The keys of the problems of a config of MINIMAL plus extra. */
function keysOf(extra: string, base = MINIMAL): string[] {
  return problemsOf(() => parse(extra, base)).map((p) => p.key);
}

/** The single problem for key; fails when there is none or more than one problem. */
function onlyProblem(extra: string, key: string, base = MINIMAL): ConfigProblem {
  const problems = problemsOf(() => parse(extra, base));
  expect(problems.map((p) => p.key)).toEqual([key]);
  return problems[0]!;
}

function withUrl(url: string): string {
  return `server:\n  url: ${JSON.stringify(url)}\n  token: ${TOKEN}\n`;
}

const DEFAULTS: AgentConfig = {
  server: { url: "wss://svc.example.com/v1/agent", token: TOKEN },
  agent: { id: null, environment: "production", stateDir: "/var/lib/svc-agent" },
  certificates: { caCertPath: null, insecureSkipVerify: false },
  collectors: [],
  logging: { level: "info", file: null },
  customFingerprints: [],
  browse: {
    enabled: true,
    allowedRoots: ["/var/log", "/var/lib/docker/containers", "/opt"],
    denyPatterns: [
      "*.key",
      "*.pem",
      "*.p12",
      "*.pfx",
      "*.jks",
      "*.kdbx",
      "id_rsa*",
      "id_dsa*",
      "id_ecdsa*",
      "id_ed25519*",
      ".env",
      ".env.*",
      "*shadow*",
      ".ssh",
      "/proc/*",
      "/sys/*",
      "/etc/shadow",
    ],
    maxDirEntries: 1000,
    maxSampleLines: 200,
    maxSampleBytes: 262144,
  },
};

describe("defaults", () => {
  test("server.url and server.token are enough; every other key has its spec default", () => {
    expect(parse()).toEqual({ config: DEFAULTS, notices: [] });
  });

  test("empty sections and null values read as unset", () => {
    const text = "agent:\ncertificates:\ncollector:\nlogging:\n  level:\nbrowse:\n  maxDirEntries: ~\n";
    expect(parse(text).config).toEqual(DEFAULTS);
  });

  test("an empty file lacks the two required keys, and says so for both", () => {
    const problems = problemsOf(() => parseAgentConfig(""));
    expect(problems.map((p) => p.key)).toEqual(["server.url", "server.token"]);
    expect(problems[0]!.message).toContain("is required");
  });
});

describe("one /etc/svc/config.yaml shared with the server", () => {
  // server/config/load.test.ts loads the same file in the server.
  const SHARED = join(import.meta.dir, "../server/config/testdata/shared-host.yaml");

  test("a file holding both programs' sections loads in the agent", () => {
    const { config } = loadAgentConfig(SHARED);
    expect(config.server).toEqual({ url: "wss://svc.example.com/v1/agent", token: "svcen_A1b2C3d4A1b2C3d4A1b2C3d4A1b2C3d4A1b2C3d4xyz" });
    expect(config.agent.environment).toBe("staging");
    expect(config.logging).toEqual({ level: "warn", file: "/var/log/svc-agent/agent.log" });
    expect(config.browse.maxDirEntries).toBe(50);
    expect(readFileSync(SHARED, "utf8")).toMatch(/^listen: 0\.0\.0\.0:443$/m);
  });

  test("the server's sections are not checked here; the agent's own keys and keys neither documents still are", () => {
    expect(foreignSections("agent")).toEqual(expect.arrayContaining(["listen", "storage", "tls"]));
    const text = [
      "listen: 5",
      "storage: not a mapping",
      "tls:\n  certFile: [1, 2]",
      "browse:\n  maxDirEntries: lots",
      "metricz: {}",
      "logging:\n  format: json",
    ].join("\n");
    expect(keysOf(text).sort()).toEqual(["browse.maxDirEntries", "logging.format", "metricz"]);
  });

  test("logging.level is read by both, so a level only the server knows is refused here", () => {
    expect(onlyProblem("logging:\n  level: trace\n", "logging.level").message).toContain('"debug"');
  });
});

describe("unknown keys and wrong types", () => {
  test("an unknown key is named by its full dotted key, at every depth", () => {
    const text = [
      "serverr: {}",
      "browse:\n  maxDirEntry: 10",
      "collectors:\n  - name: a\n    foo: 1",
      "collector:\n  bogus: true",
      "logging:\n  format: json",
    ].join("\n");
    expect(keysOf(text).sort()).toEqual(["browse.maxDirEntry", "collector.bogus", "collectors[0].foo", "logging.format", "serverr"].sort());
  });

  test("wrong types are named, and all problems come at once", () => {
    const text = [
      "agent:\n  id: 12",
      "browse:\n  enabled: yes please\n  maxSampleLines: '10'\n  allowedRoots: /var/log",
      "certificates:\n  insecureSkipVerify: 1",
      "collectors:\n  name: a",
    ].join("\n");
    const problems = problemsOf(() => parse(text));
    expect(problems.map((p) => p.key).sort()).toEqual(
      ["agent.id", "browse.allowedRoots", "browse.enabled", "browse.maxSampleLines", "certificates.insecureSkipVerify", "collectors"].sort(),
    );
    expect(problems.find((p) => p.key === "agent.id")!.message).toBe("must be a string");
    expect(problems.find((p) => p.key === "browse.enabled")!.message).toBe("must be true or false");
    expect(problems.find((p) => p.key === "browse.maxSampleLines")!.message).toBe("must be a whole number");
    expect(problems.find((p) => p.key === "collectors")!.message).toBe("must be a list");
  });

  test("a section that is not a mapping is named", () => {
    expect(onlyProblem("agent: production\n", "agent").message).toBe("must be a mapping of keys");
  });

  test("a file that is not a mapping is a (root) problem", () => {
    expect(problemsOf(() => parseAgentConfig("- a\n- b\n")).map((p) => p.key)).toEqual(["(root)"]);
  });
});

describe("YAML", () => {
  test("a syntax error is reported with its line", () => {
    const problems = problemsOf(() => parseAgentConfig("server:\n  url: https://h\n\ttoken: x\n"));
    expect(problems).toEqual([{ key: "(yaml)", message: "line 3, column 1: Tabs are not allowed as indentation" }]);
  });

  test("a duplicate key is a syntax error with its line", () => {
    const problems = problemsOf(() => parseAgentConfig(`${MINIMAL}agent:\n  id: a\nagent:\n  id: b\n`));
    expect(problems.map((p) => p.key)).toEqual(["(yaml)"]);
    expect(problems[0]!.message).toStartWith("line 6, ");
    expect(problems[0]!.message).toContain("unique");
  });

  test("an alias bomb is refused rather than expanded", () => {
    const bomb = [
      'a: &a ["x","x","x","x","x","x","x","x","x"]',
      "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]",
      "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]",
      "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]",
      "e: [*d,*d,*d,*d,*d,*d,*d,*d,*d]",
    ].join("\n");
    const problems = problemsOf(() => parseAgentConfig(MINIMAL + bomb));
    expect(problems.map((p) => p.key)).toEqual(["(yaml)"]);
    expect(problems[0]!.message).toContain("alias");
  });

  test("a few aliases for reuse are fine", () => {
    const text = "browse:\n  allowedRoots: &roots [/srv/logs]\n  denyPatterns: *roots\n";
    expect(parse(text).config.browse.allowedRoots).toEqual(["/srv/logs"]);
  });

  test("a file over 1 MiB is refused before parsing", () => {
    const problems = problemsOf(() => parseAgentConfig(MINIMAL + "#" + "x".repeat(1024 * 1024) + "\n"));
    expect(problems.map((p) => p.key)).toEqual(["(yaml)"]);
    expect(problems[0]!.message).toContain("larger than 1048576 bytes");
  });
});

describe("server.url", () => {
  const normalised: [string, string][] = [
    ["https://svc.example.com", "wss://svc.example.com/v1/agent"],
    ["https://svc.example.com/", "wss://svc.example.com/v1/agent"],
    ["https://SVC.Example.com:8443", "wss://svc.example.com:8443/v1/agent"],
    ["https://svc.example.com:443/", "wss://svc.example.com/v1/agent"],
    ["https://example.com/svc/", "wss://example.com/svc/v1/agent"],
    ["https://svc.example.com/v1/agent", "wss://svc.example.com/v1/agent"],
    ["https://example.com/svc/v1/agent/", "wss://example.com/svc/v1/agent"],
    ["wss://svc.example.com/v1/agent", "wss://svc.example.com/v1/agent"],
    ["wss://svc.example.com", "wss://svc.example.com/v1/agent"],
    ["http://127.0.0.1:8080", "ws://127.0.0.1:8080/v1/agent"],
    ["http://127.10.20.30:8080/", "ws://127.10.20.30:8080/v1/agent"],
    ["http://localhost:8080", "ws://localhost:8080/v1/agent"],
    ["http://[::1]:8080", "ws://[::1]:8080/v1/agent"],
    ["ws://127.0.0.1:8080/v1/agent", "ws://127.0.0.1:8080/v1/agent"],
  ];
  test.each(normalised)("%s → %s", (given, expected) => {
    const { config, notices } = parseAgentConfig(withUrl(given));
    expect(config.server.url).toBe(expected);
    expect(notices).toEqual([]);
  });

  test("a legacy grpcs://<host>:50051 is normalised to the WSS endpoint, with one notice", () => {
    const { config, notices } = parseAgentConfig(withUrl("grpcs://svc.example.com:50051"));
    expect(config.server.url).toBe("wss://svc.example.com/v1/agent");
    expect(notices).toEqual(["server.url: legacy grpcs://svc.example.com:50051 normalised to wss://svc.example.com/v1/agent"]);
  });

  const refused: [string, string][] = [
    ["http://svc.example.com", "loopback"],
    ["http://10.0.0.5:8080", "loopback"],
    ["ws://svc.example.com/v1/agent", "loopback"],
    ["http://128.0.0.1", "loopback"],
    ["ftp://svc.example.com", "https://"],
    ["grpc://svc.example.com:50051", "https://"],
    ["svc.example.com", "absolute URL"],
    ["https:svc.example.com", "absolute URL"],
    ["https://user:secret@svc.example.com", "user name or password"],
    ["https://svc.example.com/?x=1", "query"],
    ["https://svc.example.com/#top", "fragment"],
    ["https://svc.example.com/v1/opamp", "OpAMP"],
    ["grpcs://svc.example.com:50051/path", "no path"],
  ];
  test.each(refused)("%s is refused (%s)", (given, why) => {
    expect(onlyProblem("", "server.url", withUrl(given)).message).toContain(why);
  });

  test("a missing url is required", () => {
    expect(onlyProblem("", "server.url", `server:\n  token: ${TOKEN}\n`).message).toContain("is required");
  });
});

describe("server.token", () => {
  test("must be an enrollment token, and the message does not repeat it", () => {
    const secret = "svcsa_" + "Z".repeat(40);
    const problem = onlyProblem("", "server.token", `server:\n  url: https://h\n  token: ${secret}\n`);
    expect(problem.message).toContain("svcen_");
    expect(problem.message).not.toContain(secret);
  });

  test("a prefix with too little randomness is refused", () => {
    onlyProblem("", "server.token", "server:\n  url: https://h\n  token: svcen_short\n");
  });

  test("missing is required", () => {
    expect(onlyProblem("", "server.token", "server:\n  url: https://h\n").message).toContain("is required");
  });
});

describe("agent", () => {
  test("id, environment and stateDir are kept", () => {
    expect(parse("agent:\n  id: web-01.prod:a_b\n  environment: staging\n  stateDir: /srv/svc-agent\n").config.agent).toEqual({
      id: "web-01.prod:a_b",
      environment: "staging",
      stateDir: "/srv/svc-agent",
    });
  });

  test("a relative stateDir is refused", () => {
    onlyProblem("agent:\n  stateDir: state\n", "agent.stateDir");
  });

  test.each(["-leading", "has space", "a/b", "x".repeat(129)])("id %p is refused", (id) => {
    onlyProblem(`agent:\n  id: ${JSON.stringify(id)}\n`, "agent.id");
  });

  test("an environment with a control character is refused", () => {
    onlyProblem('agent:\n  environment: "a\\tb"\n', "agent.environment");
  });
});

describe("certificates", () => {
  const ca = join(dir, "ca.pem");
  writeFileSync(ca, "-----BEGIN CERTIFICATE-----\n");

  test("caCertPath that exists is kept", () => {
    expect(parse(`certificates:\n  caCertPath: ${ca}\n`).config.certificates).toEqual({ caCertPath: ca, insecureSkipVerify: false });
  });

  test("caCertPath that does not exist is named at load time", () => {
    const missing = join(dir, "missing.pem");
    expect(onlyProblem(`certificates:\n  caCertPath: ${missing}\n`, "certificates.caCertPath").message).toBe(`${missing} does not exist`);
  });

  test("caCertPath that is a directory is named", () => {
    expect(onlyProblem(`certificates:\n  caCertPath: ${dir}\n`, "certificates.caCertPath").message).toContain("not a regular file");
  });

  test(
    "caCertPath that cannot be read is named",
    () => {
      if (rerunUnprivileged(import.meta.path, "caCertPath that cannot be read is named")) return;
      const unreadable = join(dir, "unreadable.pem");
      writeFileSync(unreadable, "x");
      chmodSync(unreadable, 0o000);
      expect(onlyProblem(`certificates:\n  caCertPath: ${unreadable}\n`, "certificates.caCertPath").message).toContain("cannot be read");
    },
    RERUN_TIMEOUT_MS,
  );

  test("a relative caCertPath is refused", () => {
    expect(onlyProblem("certificates:\n  caCertPath: ca.pem\n", "certificates.caCertPath").message).toBe("must be an absolute path");
  });

  test("insecureSkipVerify true is kept, with a notice", () => {
    const { config, notices } = parse("certificates:\n  insecureSkipVerify: true\n");
    expect(config.certificates.insecureSkipVerify).toBe(true);
    expect(notices).toEqual([expect.stringContaining("certificates.insecureSkipVerify")]);
  });
});

describe("collectors", () => {
  test("a collector block that sets nothing means detect", () => {
    expect(parse("collector:\n  binaryPath:\n  serviceName: ''\n").config.collectors).toEqual([]);
  });

  test("a collector block that sets something is the one collector, its name derived from serviceName", () => {
    const text =
      "collector:\n  binaryPath: /usr/bin/otelcol-contrib\n  configPath: /etc/otel-collector/config.yaml\n  serviceName: otel-collector.service\n  collectorType: otelcol\n";
    expect(parse(text).config.collectors).toEqual([
      {
        name: "otel-collector",
        binaryPath: "/usr/bin/otelcol-contrib",
        configPath: "/etc/otel-collector/config.yaml",
        serviceName: "otel-collector.service",
        collectorType: "otelcol",
        nativeRemoteConfig: false,
        metricsUrl: "http://127.0.0.1:8888/metrics",
      },
    ]);
  });

  test("collectors[] supersedes the collector block, with a notice", () => {
    const { config, notices } = parse("collector:\n  serviceName: old\ncollectors:\n  - serviceName: new\n");
    expect(config.collectors.map((c) => c.name)).toEqual(["new"]);
    expect(notices).toEqual(["collector: ignored because collectors[] is set"]);
  });

  test("the collector block is still checked when collectors[] supersedes it", () => {
    expect(keysOf("collector:\n  collectorType: fluentd\ncollectors:\n  - serviceName: new\n")).toEqual(["collector.collectorType"]);
  });

  test("nativeRemoteConfig and metricsUrl default per collector type, and wait for discovery when the type is unset", () => {
    const text = "collectors:\n  - collectorType: alloy\n  - collectorType: otelcol\n  - serviceName: unknown\n";
    const collectors = parse(text).config.collectors;
    expect(collectors.map((c) => [c.collectorType, c.nativeRemoteConfig, c.metricsUrl])).toEqual([
      ["alloy", true, "http://127.0.0.1:12345/metrics"],
      ["otelcol", false, "http://127.0.0.1:8888/metrics"],
      [null, null, null],
    ]);
  });

  test("an explicit nativeRemoteConfig or metricsUrl wins over the type's default; null means the default", () => {
    const text = [
      "collectors:",
      "  - collectorType: alloy\n    nativeRemoteConfig: false\n    metricsUrl: https://127.0.0.1:9999/m",
      "  - collectorType: otelcol\n    nativeRemoteConfig: true",
      "  - collectorType: alloy\n    nativeRemoteConfig: null",
    ].join("\n");
    const collectors = parse(text).config.collectors;
    expect(collectors.map((c) => [c.nativeRemoteConfig, c.metricsUrl])).toEqual([
      [false, "https://127.0.0.1:9999/m"],
      [true, "http://127.0.0.1:8888/metrics"],
      [true, "http://127.0.0.1:12345/metrics"],
    ]);
  });

  test("names: given, else from serviceName without .service, else collector-<position>", () => {
    const text = "collectors:\n  - name: edge\n  - serviceName: alloy.service\n  - collectorType: otelcol\n  - name: ''\n    serviceName: agent@1.service\n";
    expect(parse(text).config.collectors.map((c) => c.name)).toEqual(["edge", "alloy", "collector-3", "agent@1"]);
  });

  test("a duplicate name is named at the later entry", () => {
    const problem = onlyProblem("collectors:\n  - name: a\n  - name: b\n  - name: a\n", "collectors[2].name");
    expect(problem.message).toContain("collectors[0]");
  });

  test("a duplicate derived name says where it came from", () => {
    const problem = onlyProblem("collectors:\n  - serviceName: alloy\n  - serviceName: alloy.service\n", "collectors[1].name");
    expect(problem.message).toContain("derived from serviceName");
    const positional = onlyProblem("collectors:\n  - name: collector-2\n  - collectorType: alloy\n", "collectors[1].name");
    expect(positional.message).toContain("derived from its position");
  });

  test("each key of an entry is checked and named", () => {
    const text = [
      "collectors:",
      "  - name: 'bad name'",
      "    binaryPath: bin/otelcol",
      "    configPath: config.yaml",
      "    serviceName: 'a b'",
      "    collectorType: fluentd",
      "    nativeRemoteConfig: sometimes",
      "    metricsUrl: tcp://127.0.0.1:8888",
      "  - null",
    ].join("\n");
    expect(keysOf(text + "\n").sort()).toEqual(
      [
        "collectors[0].binaryPath",
        "collectors[0].collectorType",
        "collectors[0].configPath",
        "collectors[0].metricsUrl",
        "collectors[0].name",
        "collectors[0].nativeRemoteConfig",
        "collectors[0].serviceName",
        "collectors[1]",
      ].sort(),
    );
  });

  test("collectorType accepts exactly otelcol and alloy", () => {
    expect(onlyProblem("collector:\n  collectorType: Alloy\n", "collector.collectorType").message).toContain('"otelcol"');
  });
});

describe("logging", () => {
  test.each(["debug", "info", "warn", "error"])("level %s is accepted", (level) => {
    expect(parse(`logging:\n  level: ${level}\n`).config.logging.level).toBe(level as AgentConfig["logging"]["level"]);
  });

  test("another level is refused, and file must be absolute", () => {
    expect(keysOf("logging:\n  level: trace\n  file: agent.log\n")).toEqual(["logging.level", "logging.file"]);
  });

  test("file is kept", () => {
    expect(parse("logging:\n  file: /var/log/svc-agent.log\n").config.logging.file).toBe("/var/log/svc-agent.log");
  });
});

describe("browse", () => {
  test("given values are kept; roots are normalised and de-duplicated", () => {
    const text = [
      "browse:",
      "  enabled: false",
      "  allowedRoots: [/srv/logs/, /srv//logs, /data/../var/app, '*']",
      "  maxDirEntries: 100000",
      "  maxSampleLines: 1",
      "  maxSampleBytes: 16777216",
    ].join("\n");
    expect(parse(text + "\n").config.browse).toEqual({
      enabled: false,
      allowedRoots: ["/srv/logs", "/var/app", "*"],
      denyPatterns: [...ALWAYS_DENIED],
      maxDirEntries: 100000,
      maxSampleLines: 1,
      maxSampleBytes: 16777216,
    });
  });

  test("/ is a root of its own", () => {
    expect(parse("browse:\n  allowedRoots: [/]\n").config.browse.allowedRoots).toEqual(["/"]);
  });

  test("operator deny patterns are added to the defaults, never replace them", () => {
    expect(parse("browse:\n  denyPatterns: ['*.sqlite', '*.pem']\n").config.browse.denyPatterns).toEqual([...ALWAYS_DENIED, "*.sqlite"]);
    expect(parse("browse:\n  denyPatterns: []\n").config.browse.denyPatterns).toEqual([...ALWAYS_DENIED]);
  });

  test("a relative root or an empty pattern is named by its index", () => {
    expect(keysOf("browse:\n  allowedRoots: [/var/log, var/lib]\n  denyPatterns: ['*.db', '']\n")).toEqual([
      "browse.allowedRoots[1]",
      "browse.denyPatterns[1]",
    ]);
  });

  test.each([
    ["maxDirEntries", 0],
    ["maxDirEntries", 100001],
    ["maxSampleLines", -1],
    ["maxSampleLines", 100001],
    ["maxSampleBytes", 16777217],
    ["maxSampleBytes", 1.5],
  ])("%s %p is refused", (key, value) => {
    onlyProblem(`browse:\n  ${key}: ${value}\n`, `browse.${key}`);
  });
});

describe("customFingerprints", () => {
  const fingerprint = (name: string) =>
    [
      `  - name: ${name}`,
      "    title: My app",
      "    match:\n      processNames: [myapp]",
      "    logPaths: [/var/log/myapp/*.log]",
      "    pipeline:\n      source:\n        type: filelog\n        config: { include: [/var/log/myapp/*.log] }",
    ].join("\n");

  test("a valid one is kept with defaults applied", () => {
    const fingerprints = parse(`customFingerprints:\n${fingerprint("myapp")}\n`).config.customFingerprints;
    expect(fingerprints).toEqual([
      {
        name: "myapp",
        title: "My app",
        match: { processNames: ["myapp"], ports: [], units: [], files: [] },
        logPaths: ["/var/log/myapp/*.log"],
        pipeline: { source: { type: "filelog", config: { include: ["/var/log/myapp/*.log"] } }, processors: [] },
      },
    ]);
  });

  test("problems are named from customFingerprints[i]", () => {
    const text = "customFingerprints:\n  - name: Bad Name\n    title: x\n    match: {}\n    pipeline:\n      source: { type: filelog }\n    extra: 1\n";
    expect(keysOf(text).sort()).toEqual(["customFingerprints[0].extra", "customFingerprints[0].match", "customFingerprints[0].name"].sort());
  });

  test("two with one name are refused at the later one", () => {
    expect(keysOf(`customFingerprints:\n${fingerprint("myapp")}\n${fingerprint("myapp")}\n`)).toEqual(["customFingerprints[1].name"]);
  });
});

describe("loadAgentConfig", () => {
  test("reads the file", () => {
    const path = join(dir, "config.yaml");
    writeFileSync(path, MINIMAL);
    expect(loadAgentConfig(path).config).toEqual(DEFAULTS);
  });

  test("a missing file is a --config problem that names the path", () => {
    const path = join(dir, "nope.yaml");
    const problems = problemsOf(() => loadAgentConfig(path));
    expect(problems).toEqual([{ key: "--config", message: `${path} does not exist` }]);
  });

  test("a directory is a --config problem", () => {
    const path = join(dir, "a-directory");
    mkdirSync(path);
    expect(problemsOf(() => loadAgentConfig(path))).toEqual([{ key: "--config", message: `${path} is not a regular file` }]);
  });

  test("an oversized file is refused without reading it", () => {
    const path = join(dir, "big.yaml");
    writeFileSync(path, MINIMAL + "#" + "x".repeat(1024 * 1024));
    expect(problemsOf(() => loadAgentConfig(path)).map((p) => p.key)).toEqual(["--config"]);
  });

  test("problems inside the file are reported by key", () => {
    const path = join(dir, "bad.yaml");
    writeFileSync(path, MINIMAL + "browse:\n  maxDirEntry: 5\n");
    expect(problemsOf(() => loadAgentConfig(path)).map((p) => p.key)).toEqual(["browse.maxDirEntry"]);
  });
});
