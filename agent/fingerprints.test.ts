/**
 * Built-in fingerprints are valid and their templates are valid catalog
 * configs; matching works by each matcher against a fake filesystem root in
 * a temporary directory; invalid custom fingerprints are named by key.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { parse } from "yaml";
import { validateComponentConfig } from "../server/catalog/index.ts";
import { builtinFingerprints, matchFingerprints, mergeFingerprints, validateFingerprint } from "./fingerprints.ts";
import type { Fingerprint, ServiceFacts } from "./types.ts";

const FINGERPRINTS_DIR = join(import.meta.dir, "..", "fingerprints");
const FILES = readdirSync(FINGERPRINTS_DIR).filter((f) => f.endsWith(".yaml"));
const NO_FACTS: ServiceFacts = { processes: [], listening: [], units: [] };

/** A fingerprint with the given match (and logPaths), everything else minimal. */
function fingerprint(name: string, match: Partial<Fingerprint["match"]>, logPaths: string[] = []): Fingerprint {
  return {
    name,
    title: name,
    match: { processNames: [], ports: [], units: [], files: [], ...match },
    logPaths,
    pipeline: { source: { type: "filelog", config: { include: ["/var/log/x.log"] } }, processors: [] },
  };
}

function keysOf(raw: unknown, prefix = "customFingerprints[0]"): string[] {
  const { fingerprint, problems } = validateFingerprint(raw, prefix);
  expect(fingerprint).toBeUndefined();
  return problems.map((p) => p.key);
}

const VALID = {
  name: "myapp",
  title: "My app",
  match: { processNames: ["myapp"] },
  logPaths: ["/var/log/myapp/*.log"],
  pipeline: { source: { type: "filelog", config: { include: ["/var/log/myapp/*.log"] } } },
};

describe("built-in fingerprints", () => {
  const builtins = builtinFingerprints();

  test("every fingerprints/*.yaml is built in, under its file name", () => {
    expect(FILES.length).toBeGreaterThanOrEqual(10);
    expect(builtins.map((f) => `${f.name}.yaml`).sort()).toEqual([...FILES].sort());
  });

  test("the services the agent must recognise are all there", () => {
    const names = builtins.map((f) => f.name);
    for (const name of ["nginx", "apache", "postgresql", "mysql", "redis", "docker", "kubernetes", "journald", "syslog", "haproxy"]) {
      expect(names).toContain(name);
    }
  });

  test.each(FILES)("%s parses and validates", (file) => {
    const { fingerprint, problems } = validateFingerprint(parse(readFileSync(join(FINGERPRINTS_DIR, file), "utf8")), file);
    expect(problems).toEqual([]);
    expect(fingerprint?.name).toBe(file.replace(/\.yaml$/, ""));
  });

  test.each(builtins.map((f) => [f.name, f] as const))("%s: the pipeline template is valid against the server's catalog", (_, f) => {
    expect(() => validateComponentConfig("source", f.pipeline.source.type, f.pipeline.source.config, "pipeline.source.config")).not.toThrow();
    f.pipeline.processors.forEach((step, i) => {
      expect(() => validateComponentConfig("processor", step.type, step.config, `pipeline.processors[${i}].config`)).not.toThrow();
    });
  });

  test("a file source template reads exactly the fingerprint's logPaths", () => {
    for (const f of builtins.filter((b) => b.pipeline.source.type === "filelog")) {
      expect({ name: f.name, include: f.pipeline.source.config.include }).toEqual({ name: f.name, include: f.logPaths });
    }
  });

  test("the catalog check is not a rubber stamp", () => {
    expect(() => validateComponentConfig("source", "filelog", { include: [] })).toThrow();
    expect(() => validateComponentConfig("processor", "resource", { attributes: [{ key: "k", action: "insert" }] })).toThrow();
  });
});

describe("validateFingerprint", () => {
  test("a valid fingerprint gets its defaults", () => {
    expect(validateFingerprint(VALID, "x")).toEqual({
      fingerprint: {
        name: "myapp",
        title: "My app",
        match: { processNames: ["myapp"], ports: [], units: [], files: [] },
        logPaths: ["/var/log/myapp/*.log"],
        pipeline: { source: { type: "filelog", config: { include: ["/var/log/myapp/*.log"] } }, processors: [] },
      },
      problems: [],
    });
  });

  test("required keys are named", () => {
    expect(keysOf({}).sort()).toEqual(
      ["customFingerprints[0].match", "customFingerprints[0].name", "customFingerprints[0].pipeline", "customFingerprints[0].title"].sort(),
    );
  });

  test("an unknown key is named at every depth", () => {
    const raw = {
      ...VALID,
      extra: 1,
      match: { processNames: ["a"], pids: [1] },
      pipeline: { source: { type: "filelog", config: {}, kind: "x" }, sink: {} },
    };
    expect(keysOf(raw).sort()).toEqual(
      [
        "customFingerprints[0].extra",
        "customFingerprints[0].match.pids",
        "customFingerprints[0].pipeline.sink",
        "customFingerprints[0].pipeline.source.kind",
      ].sort(),
    );
  });

  test("a match with no matcher is refused", () => {
    expect(keysOf({ ...VALID, match: { processNames: [], ports: [] } })).toEqual(["customFingerprints[0].match"]);
  });

  test("each matcher's items are checked and named by index", () => {
    const match = {
      processNames: ["ok", "/usr/sbin/nginx"],
      ports: [80, 0, 70000, "443", null],
      units: ["nginx.service", "nginx"],
      files: ["/etc/ok", "etc/nginx", "/etc/*.conf", "/proc/1/status"],
    };
    expect(keysOf({ ...VALID, match })).toEqual([
      "customFingerprints[0].match.processNames[1]",
      "customFingerprints[0].match.ports[1]",
      "customFingerprints[0].match.ports[2]",
      "customFingerprints[0].match.ports[3]",
      "customFingerprints[0].match.ports[4]",
      "customFingerprints[0].match.units[1]",
      "customFingerprints[0].match.files[1]",
      "customFingerprints[0].match.files[2]",
      "customFingerprints[0].match.files[3]",
    ]);
  });

  test("logPaths must be absolute globs below a fixed directory outside /proc and /sys", () => {
    const logPaths = ["/var/log/a/*.log", "var/log/*.log", "/*/log/*.log", "/proc/*/fd/1", "/sys/kernel/**", "/var/log/x.log"];
    expect(keysOf({ ...VALID, logPaths })).toEqual([
      "customFingerprints[0].logPaths[1]",
      "customFingerprints[0].logPaths[2]",
      "customFingerprints[0].logPaths[3]",
      "customFingerprints[0].logPaths[4]",
    ]);
  });

  test("pipeline steps are named, processors by index", () => {
    const pipeline = { source: { config: "x" }, processors: [{ type: "batch" }, { type: "Batch!" }, null] };
    expect(keysOf({ ...VALID, pipeline })).toEqual([
      "customFingerprints[0].pipeline.source.type",
      "customFingerprints[0].pipeline.source.config",
      "customFingerprints[0].pipeline.processors[1].type",
      "customFingerprints[0].pipeline.processors[2]",
    ]);
  });

  test("names are lower-case ids", () => {
    expect(keysOf({ ...VALID, name: "My App" })).toEqual(["customFingerprints[0].name"]);
  });

  test("not a mapping at all", () => {
    expect(keysOf("nginx", "customFingerprints[3]")).toEqual(["customFingerprints[3]"]);
  });
});

describe("mergeFingerprints", () => {
  test("a custom fingerprint replaces the built-in of its name in place; new ones follow", () => {
    const builtin = [fingerprint("a", { ports: [1] }), fingerprint("b", { ports: [2] })];
    const custom = [fingerprint("c", { ports: [3] }), fingerprint("a", { ports: [9] })];
    const merged = mergeFingerprints(builtin, custom);
    expect(merged.map((f) => [f.name, f.match.ports])).toEqual([
      ["a", [9]],
      ["b", [2]],
      ["c", [3]],
    ]);
    expect(builtin[0]!.match.ports).toEqual([1]);
  });

  test("with the real built-ins", () => {
    const custom = fingerprint("nginx", { processNames: ["openresty"] });
    const merged = mergeFingerprints(builtinFingerprints(), [custom]);
    expect(merged.filter((f) => f.name === "nginx")).toEqual([custom]);
    expect(merged.length).toBe(builtinFingerprints().length);
  });
});

describe("matchFingerprints", () => {
  let root: string;

  /** Creates files (with parents) under the fake root. */
  function touch(...paths: string[]): void {
    for (const path of paths) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), "line\n");
    }
  }

  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), "svc-agent-fingerprints-"));
    touch(
      "/etc/haproxy/haproxy.cfg",
      "/var/log/nginx/access.log",
      "/var/log/nginx/error.log",
      "/var/log/nginx/notes.txt",
      "/var/lib/docker/containers/abc/abc-json.log",
      "/var/lib/docker/containers/def/def-json.log",
      "/var/lib/docker/containers/def/config.v2.json",
      "/var/log/pods/ns_pod_uid/app/0.log",
      "/var/log/pods/ns_pod_uid/sidecar/1.log",
      "/var/log/syslog",
      "/var/log/many/a.log",
      "/var/log/many/b.log",
      "/var/log/many/c.log",
    );
    mkdirSync(join(root, "/var/lib/kubelet"), { recursive: true });
    mkdirSync(join(root, "/run/systemd/journal"), { recursive: true });
    // Links are neither reported nor followed: the nginx image's access.log points at stdout.
    symlinkSync("/dev/stdout", join(root, "/var/log/nginx/stdout.log"));
    symlinkSync(join(root, "/var/log/many"), join(root, "/var/log/nginx/linked"));
    symlinkSync(join(root, "/var/log/many/a.log"), join(root, "/var/log/messages"));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  const builtin = (name: string) => builtinFingerprints().filter((f) => f.name === name);

  test("nothing on the host matches nothing", async () => {
    expect(await matchFingerprints(builtinFingerprints(), NO_FACTS, { root: join(root, "empty") })).toEqual([]);
  });

  test("by process base name, from the name or the command's executable", async () => {
    const facts: ServiceFacts = {
      ...NO_FACTS,
      processes: [
        { pid: 10, name: "nginx", command: "nginx: master process", user: "root" },
        { pid: 11, name: "nginx", command: "nginx: worker process", user: "www-data" },
        { pid: 20, name: "redis-serv", command: "/usr/bin/redis-server 127.0.0.1:6379", user: null },
        { pid: 30, name: "bash", command: "bash", user: null },
      ],
    };
    const found = await matchFingerprints([...builtin("nginx"), ...builtin("redis")], facts, { root });
    expect(found.map((s) => [s.fingerprint, s.evidence, s.pids])).toEqual([
      ["nginx", ["process:nginx"], [10, 11]],
      ["redis", ["process:redis-server"], [20]],
    ]);
  });

  test("by listening TCP port, with the listener's pid; UDP does not count", async () => {
    const facts: ServiceFacts = {
      ...NO_FACTS,
      listening: [
        { port: 5432, protocol: "tcp", address: "127.0.0.1", pid: 42, process: "postgres" },
        { port: 5432, protocol: "tcp", address: "::1", pid: null, process: null },
        { port: 6379, protocol: "udp", address: "0.0.0.0", pid: 7, process: null },
      ],
    };
    const found = await matchFingerprints([...builtin("postgresql"), ...builtin("redis")], facts, { root });
    expect(found.map((s) => [s.fingerprint, s.evidence, s.pids, s.ports])).toEqual([["postgresql", ["port:5432"], [42], [5432]]]);
  });

  test("by systemd unit", async () => {
    const facts: ServiceFacts = { ...NO_FACTS, units: ["apache2.service", "ssh.service"] };
    const found = await matchFingerprints(builtinFingerprints(), facts, { root: join(root, "empty") });
    expect(found.map((s) => [s.fingerprint, s.evidence])).toEqual([["apache", ["unit:apache2.service"]]]);
  });

  test("by a file or directory that exists under the root; reported paths are the host's", async () => {
    const found = await matchFingerprints([...builtin("haproxy"), ...builtin("kubernetes"), ...builtin("journald"), ...builtin("mysql")], NO_FACTS, { root });
    expect(found.map((s) => [s.fingerprint, s.evidence])).toEqual([
      ["haproxy", ["file:/etc/haproxy/haproxy.cfg"]],
      ["kubernetes", ["file:/var/lib/kubelet"]],
      ["journald", ["file:/run/systemd/journal"]],
    ]);
  });

  test("every matcher that hits is evidence, in matcher order", async () => {
    const f = fingerprint("multi", { processNames: ["nginx"], ports: [8080], units: ["nginx.service"], files: ["/etc/haproxy/haproxy.cfg", "/etc/none"] });
    const facts: ServiceFacts = {
      processes: [{ pid: 3, name: "nginx", command: "nginx", user: null }],
      listening: [{ port: 8080, protocol: "tcp", address: "0.0.0.0", pid: 3, process: "nginx" }],
      units: ["nginx.service"],
    };
    const [service] = await matchFingerprints([f], facts, { root });
    expect(service).toEqual({
      fingerprint: "multi",
      title: "multi",
      evidence: ["process:nginx", "port:8080", "unit:nginx.service", "file:/etc/haproxy/haproxy.cfg"],
      pids: [3],
      ports: [8080],
      logFiles: [],
      pipeline: f.pipeline,
    });
  });

  test("log files: regular files matching the globs, sorted; links are neither reported nor followed", async () => {
    const facts: ServiceFacts = { ...NO_FACTS, units: ["nginx.service", "docker.service", "kubelet.service", "rsyslog.service"] };
    const found = await matchFingerprints(builtinFingerprints(), facts, { root });
    const logFiles = Object.fromEntries(found.map((s) => [s.fingerprint, s.logFiles]));
    expect(logFiles).toEqual({
      nginx: ["/var/log/nginx/access.log", "/var/log/nginx/error.log"],
      docker: ["/var/lib/docker/containers/abc/abc-json.log", "/var/lib/docker/containers/def/def-json.log"],
      kubernetes: ["/var/log/pods/ns_pod_uid/app/0.log", "/var/log/pods/ns_pod_uid/sidecar/1.log"],
      syslog: ["/var/log/syslog"],
      // haproxy and journald match by their files on this root and have no log files on it.
      haproxy: [],
      journald: [],
    });
  });

  test("log files are bounded by maxLogFiles", async () => {
    const f = fingerprint("many", { files: ["/var/log/many"] }, ["/var/log/many/*.log", "/var/log/syslog"]);
    const [bounded] = await matchFingerprints([f], NO_FACTS, { root, maxLogFiles: 2 });
    expect(bounded!.logFiles.length).toBe(2);
    const [all] = await matchFingerprints([f], NO_FACTS, { root });
    expect(all!.logFiles).toEqual(["/var/log/many/a.log", "/var/log/many/b.log", "/var/log/many/c.log", "/var/log/syslog"]);
  });

  test("a missing log directory yields no files rather than an error", async () => {
    const f = fingerprint("gone", { files: ["/etc/haproxy/haproxy.cfg"] }, ["/var/log/gone/**/*.log", "/var/log/gone.log"]);
    const [service] = await matchFingerprints([f], NO_FACTS, { root });
    expect(service!.logFiles).toEqual([]);
  });
});
