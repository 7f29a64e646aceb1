import { describe, expect, test } from "bun:test";
import { DEFAULT_ALLOWED_ROOTS } from "../../shared/deny.ts";
import { builtinFingerprints } from "../../agent/fingerprints.ts";
import { HostPaths } from "./hostpaths.ts";

const policy = new HostPaths({ allowedPrefixes: DEFAULT_ALLOWED_ROOTS, denyPatterns: [] });
const filelog = (...include: string[]) => ({ include, exclude: [], start_at: "end" });
const keysOf = (p: HostPaths, type: string, config: Record<string, unknown>, kept?: Record<string, unknown>) =>
  p.problems(type, config, kept ? [kept] : []).map((d) => d.path);

describe("filelog include globs", () => {
  test("globs under the allowed prefixes pass", () => {
    expect(
      keysOf(
        policy,
        "filelog",
        filelog("/var/log/nginx/*.log", "/var/log/**/*.log", "/var/lib/docker/containers/*/*-json.log", "/opt/app/logs/app.log", "/var/log"),
      ),
    ).toEqual([]);
  });

  test("the red team's paths are refused, each by its key, with the reason and the scope that widens", () => {
    const problems = policy.problems("filelog", filelog("/var/log/app.log", "/etc/shadow", "/etc/rcfg-runtime/config.rcfg"));
    expect(problems.map((p) => p.path)).toEqual(["config.include[1]", "config.include[2]"]);
    expect(problems[0]!.message).toContain("outside the host paths sources may read");
    expect(problems[0]!.message).toContain("sources:hostpaths");
  });

  test("a glob is judged by its literal directory part; component boundaries count", () => {
    for (const path of ["/var/lo*/x.log", "/*/log/*.log", "/**/*.log", "/var/logs/x.log", "/optional/x.log", "/var/log\\/x"]) {
      expect({ path, keys: keysOf(policy, "filelog", filelog(path)) }).toEqual({ path, keys: ["config.include[0]"] });
    }
  });

  test("{a,b} alternatives are expanded and each judged: no denied name or '..' hides in one", () => {
    expect(keysOf(policy, "filelog", filelog("/var/log/{nginx,apache2}/*.log", "/{var/log,opt}/app/*.log"))).toEqual([]);
    for (const path of ["/var/log/{app.log,server.key}", "/var/log/{x,..}/shadow", "/var/log/{a,{b,../../etc}}/passwd", "/{var/log/x,etc/shadow}"]) {
      expect({ path, keys: keysOf(policy, "filelog", filelog(path)) }).toEqual({ path, keys: ["config.include[0]"] });
    }
    expect(policy.problems("filelog", filelog("/var/log/{app.log,server.key}"))[0]!.message).toContain("the alternative /var/log/server.key");
    const broad = "/var/log/" + "{a,b,c,d}".repeat(5);
    expect(policy.problems("filelog", filelog(broad))[0]!.message).toContain("alternatives");
  });

  test("'..' and relative globs are refused", () => {
    expect(policy.problems("filelog", filelog("/var/log/../../etc/shadow"))[0]!.message).toContain("'..'");
    expect(policy.problems("filelog", filelog("var/log/*.log"))[0]!.message).toContain("absolute");
  });

  test("deny patterns hit any component, globbed or not, whatever the case, even with the whole filesystem allowed", () => {
    const everything = new HostPaths({ allowedPrefixes: ["*"], denyPatterns: [] });
    for (const path of ["/var/log/*.key", "/var/log/app/SERVER.KEY", "/opt/app/.env", "/opt/app/id_ed25519", "/var/log/.ssh/*", "/var/log/x/store.p12"]) {
      expect(keysOf(policy, "filelog", filelog(path))).toEqual(["config.include[0]"]);
    }
    for (const path of ["/etc/shadow", "/proc/1/environ", "/proc/*/environ", "/home/u/.ssh/id_rsa", "/etc/*shadow*"]) {
      const [problem] = everything.problems("filelog", filelog(path));
      expect(problem?.message).toContain("deny pattern");
    }
    expect(keysOf(everything, "filelog", filelog("/etc/rcfg-runtime/config.rcfg", "/srv/x/*.log"))).toEqual([]);
  });

  test("the operator's deny patterns are added and its prefixes replace the defaults", () => {
    const custom = new HostPaths({ allowedPrefixes: ["/srv/logs/"], denyPatterns: ["*.sqlite"] });
    expect(keysOf(custom, "filelog", filelog("/srv/logs/a.log", "/srv/logs/db.sqlite", "/var/log/syslog", "/srv/logs/a.pem"))).toEqual([
      "config.include[1]",
      "config.include[2]",
      "config.include[3]",
    ]);
  });

  test("paths already stored pass; a new one beside them is still checked", () => {
    const kept = filelog("/etc/rcfg-runtime/config.rcfg");
    expect(keysOf(policy, "filelog", filelog("/etc/rcfg-runtime/config.rcfg"), kept)).toEqual([]);
    expect(keysOf(policy, "filelog", filelog("/etc/rcfg-runtime/config.rcfg", "/etc/passwd"), kept)).toEqual(["config.include[1]"]);
  });
});

describe("built-in fingerprints' suggested sources", () => {
  test("an editor can save every one under the defaults but PostgreSQL's RHEL data-directory logs, which the agent cannot browse either", () => {
    const refused = builtinFingerprints().flatMap((f) =>
      policy.problems(f.pipeline.source.type, f.pipeline.source.config as Record<string, unknown>).map((p) => `${f.name} ${p.path}`),
    );
    expect(refused).toEqual(["postgresql config.include[1]", "postgresql config.include[2]"]);
    // A narrow prefix lets editors read just those logs, not the database files beside them.
    const narrow = new HostPaths({ allowedPrefixes: [...DEFAULT_ALLOWED_ROOTS, "/var/lib/pgsql/data/log"], denyPatterns: [] });
    expect(keysOf(narrow, "filelog", filelog("/var/lib/pgsql/data/log/*.log", "/var/lib/pgsql/data/global/*"))).toEqual(["config.include[1]"]);
  });
});

describe("other source types", () => {
  test("journald's directory is checked; unset reads the system journal", () => {
    expect(keysOf(policy, "journald", { units: [], directory: "/var/log/journal" })).toEqual([]);
    expect(keysOf(policy, "journald", { units: [] })).toEqual([]);
    expect(keysOf(policy, "journald", { units: [], directory: "/home/u" })).toEqual(["config.directory"]);
  });

  test("enforce throws a validation error unless the caller holds sources:hostpaths; overrides are named by their own root", () => {
    const config = filelog("/etc/shadow");
    expect(() => policy.enforce({ scopes: new Set(["config:write"]) }, "filelog", config, [])).toThrow("sources:hostpaths");
    expect(() => policy.enforce({}, "filelog", config, [])).toThrow("sources.hostPaths");
    expect(() => policy.enforce({ scopes: new Set(["sources:hostpaths"]) }, "filelog", config, [])).not.toThrow();
    expect(policy.problems("filelog", config, [], "configOverrides").map((p) => p.path)).toEqual(["configOverrides.include[0]"]);
  });

  test("sources without host paths have nothing to check", () => {
    expect(keysOf(policy, "otlp", { include: ["/etc/shadow"] })).toEqual([]);
  });
});

describe("TLS files: OTLP destinations' and the Kafka source's", () => {
  test("ca_file, cert_file and key_file are judged as source paths are: prefixes, deny patterns, '..'", () => {
    const tls = (files: Record<string, string>) => ({ endpoint: "gw:4317", tls: files });
    expect(keysOf(policy, "otlp", tls({ ca_file: "/opt/certs/ca.crt", cert_file: "/opt/certs/client.crt", key_file: "/opt/certs/client.der" }))).toEqual([]);
    expect(keysOf(policy, "otlp", tls({ ca_file: "/etc/ssl/ca.crt", cert_file: "/opt/certs/client.crt", key_file: "/opt/certs/client.key" }))).toEqual([
      "config.tls.ca_file",
      "config.tls.key_file",
    ]);
    expect(keysOf(policy, "otlphttp", tls({ ca_file: "/opt/../etc/ca.crt" }))).toEqual(["config.tls.ca_file"]);
    // Stored paths stay savable; whoever holds sources:hostpaths set them.
    expect(keysOf(policy, "otlphttp", tls({ ca_file: "/etc/ssl/ca.crt" }), tls({ ca_file: "/etc/ssl/ca.crt" }))).toEqual([]);
  });

  test("a Kafka source's CA file is judged the same way", () => {
    const kafka = (ca_file: string) => ({ brokers: ["kafka:9092"], tls: { enabled: true, ca_file } });
    expect(keysOf(policy, "kafka", kafka("/opt/certs/kafka-ca.crt"))).toEqual([]);
    expect(keysOf(policy, "kafka", kafka("/etc/shadow"))).toEqual(["config.tls.ca_file"]);
    expect(keysOf(policy, "kafka", kafka("/var/log/../../root/ca.pem"))).toEqual(["config.tls.ca_file"]);
  });

  test("only the scope lifts the policy for a destination", () => {
    const config = { endpoint: "gw:4317", tls: { ca_file: "/etc/ssl/ca.crt" } };
    expect(() => policy.enforce({}, "otlp", config, [])).toThrow("sources:hostpaths");
    expect(() => policy.enforce({ scopes: new Set(["sources:hostpaths"]) }, "otlp", config, [])).not.toThrow();
  });
});
