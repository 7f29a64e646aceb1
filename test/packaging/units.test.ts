/**
 * systemd/svc-agent.service and systemd/svc-server.service: the directives the spec
 * fixes, `systemd-analyze verify` and its offline security review, and the hardening
 * held against the real compiled binaries, since no systemd runs the units here:
 * every system call both make while an agent enrolls, reports and answers a browse
 * is inside the unit's SystemCallFilter, and the agent's capability bounding set is
 * what discovery needs to map another user's listening port to its process and to
 * list a directory only that user may read (and each of the two is needed).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Subprocess } from "bun";
import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { built } from "../built.ts";
import { until } from "../opamp/helpers.ts";
import { BUN, bootstrapToken, removeTempDirs, REPO, startServer, tempDir, type ServerProcess } from "../process/spawn.ts";
import { directive, IS_ROOT, ok, parseUnit, run, type UnitFile } from "./tools.ts";

const AGENT_UNIT = join(REPO, "systemd/svc-agent.service");
const SERVER_UNIT = join(REPO, "systemd/svc-server.service");
const NOBODY = 65534;
let dir: string;
/** A root holding both units and both compiled binaries where the units expect them. */
let root: string;
let agentBinary: string;
let serverBinary: string;
const children: Subprocess[] = [];
let tracedServer: ServerProcess | undefined;

beforeAll(() => {
  dir = tempDir("svc-units-");
  root = join(dir, "root");
  mkdirSync(join(root, "usr/local/bin"), { recursive: true });
  mkdirSync(join(root, "etc/systemd/system"), { recursive: true });
  agentBinary = join(root, "usr/local/bin/svc-agent");
  serverBinary = join(root, "usr/local/bin/svc-server");
  // Compiled before the tests by scripts/build-for-tests.sh, as the packages ship them.
  copyFileSync(built("dist/svc-agent"), agentBinary);
  copyFileSync(built("dist/svc-server"), serverBinary);
  chmodSync(agentBinary, 0o755);
  chmodSync(serverBinary, 0o755);
  for (const unit of [AGENT_UNIT, SERVER_UNIT]) copyFileSync(unit, join(root, "etc/systemd/system", unit.split("/").at(-1)!));
});

afterAll(async () => {
  if (tracedServer) {
    stopTraced(tracedServer.proc);
    await tracedServer.stop("SIGKILL");
  }
  for (const child of children) {
    stopTraced(child);
    child.kill("SIGKILL");
    await child.exited;
  }
  removeTempDirs();
});

/** The process a tracer (strace) runs; stopping it ends the tracer, which then writes its summary. */
function stopTraced(tracer: Subprocess): void {
  const file = `/proc/${tracer.pid}/task/${tracer.pid}/children`;
  if (!existsSync(file)) return;
  for (const pid of readFileSync(file, "utf8").trim().split(/\s+/).filter(Boolean)) process.kill(Number(pid), "SIGTERM");
}

const DEPENDENCY_KEYS = ["Requires", "Requisite", "BindsTo", "PartOf", "Upholds", "Conflicts", "Before", "After", "Wants"];

describe("svc-agent.service", () => {
  const unit = parseUnit(AGENT_UNIT);
  const get = (section: string, key: string) => directive(unit, section, key);

  test("runs the spec's command, type simple, restart always after 5 s, after the network, for multi-user", () => {
    expect(get("Service", "ExecStart")).toEqual(["/usr/local/bin/svc-agent --config /etc/svc/config.yaml"]);
    expect(get("Service", "Type")).toEqual(["simple"]);
    expect(get("Service", "Restart")).toEqual(["always"]);
    expect(get("Service", "RestartSec")).toEqual(["5"]);
    expect(get("Install", "WantedBy")).toEqual(["multi-user.target"]);
    // No collector unit anywhere among its dependencies: only the network.
    const dependencies = DEPENDENCY_KEYS.filter((key) => get("Unit", key).length > 0);
    expect(dependencies.sort()).toEqual(["After", "Wants"]);
    expect(get("Unit", "After")).toEqual(["network-online.target"]);
    expect(get("Unit", "Wants")).toEqual(["network-online.target"]);
    // An unconfigured install stays inactive instead of restarting every 5 s.
    expect(get("Unit", "ConditionPathExists")).toEqual(["/etc/svc/config.yaml"]);
  });

  test("logs to the journal only and writes only its state directory (its credential)", () => {
    expect(get("Service", "StandardOutput")).toEqual(["journal"]);
    expect(get("Service", "StandardError")).toEqual(["journal"]);
    for (const key of ["LogsDirectory", "ReadWritePaths", "CacheDirectory"]) expect(get("Service", key)).toEqual([]);
    expect(get("Service", "StateDirectory")).toEqual(["svc-agent"]);
    expect(get("Service", "StateDirectoryMode")).toEqual(["0700"]);
    expect(get("Service", "ProtectSystem")).toEqual(["strict"]);
  });

  test("root for log browsing, but read-only and with only the capabilities reading needs", () => {
    expect(get("Service", "User")).toEqual([]);
    expect(get("Service", "CapabilityBoundingSet")).toEqual(["CAP_DAC_READ_SEARCH CAP_SYS_PTRACE"]);
    expect(get("Service", "AmbientCapabilities")).toEqual([]);
    expect(get("Service", "NoNewPrivileges")).toEqual(["yes"]);
    expect(get("Service", "PrivateTmp")).toEqual(["yes"]);
    // browse.allowedRoots may name /home: readable, never hidden.
    expect(get("Service", "ProtectHome")).toEqual(["read-only"]);
    for (const key of ["ProtectKernelTunables", "ProtectKernelModules", "ProtectControlGroups", "RestrictSUIDSGID", "LockPersonality"]) {
      expect(get("Service", key)).toEqual(["yes"]);
    }
    // Bun's JIT writes executable memory; discovery reads every process's /proc entries.
    for (const key of ["MemoryDenyWriteExecute", "ProtectProc", "ProcSubset"]) expect(get("Service", key)).toEqual([]);
  });
});

describe("svc-server.service", () => {
  const unit = parseUnit(SERVER_UNIT);
  const get = (section: string, key: string) => directive(unit, section, key);

  test("runs as svc with its state in /var/lib/svc and the packaged downloads, restarts on failure", () => {
    expect(get("Service", "ExecStart")).toEqual(["/usr/local/bin/svc-server --config /etc/svc/config.yaml"]);
    expect(get("Service", "Type")).toEqual(["simple"]);
    expect(get("Service", "User")).toEqual(["svc"]);
    expect(get("Service", "Group")).toEqual(["svc"]);
    expect(get("Service", "StateDirectory")).toEqual(["svc"]);
    expect(get("Service", "Environment").sort()).toEqual(["SVC_DOWNLOADS_DIR=/usr/share/svc-server/downloads", "SVC_STORAGE_BOLTPATH=/var/lib/svc/state.db"]);
    expect(get("Service", "Restart")).toEqual(["on-failure"]);
    expect(get("Unit", "After")).toEqual(["network-online.target"]);
    expect(get("Install", "WantedBy")).toEqual(["multi-user.target"]);
  });

  test("may bind port 443 and nothing more", () => {
    expect(get("Service", "AmbientCapabilities")).toEqual(["CAP_NET_BIND_SERVICE"]);
    expect(get("Service", "CapabilityBoundingSet")).toEqual(["CAP_NET_BIND_SERVICE"]);
    expect(get("Service", "NoNewPrivileges")).toEqual(["yes"]);
    expect(get("Service", "ProtectSystem")).toEqual(["strict"]);
    expect(get("Service", "ProtectHome")).toEqual(["yes"]);
    expect(get("Service", "PrivateTmp")).toEqual(["yes"]);
    expect(get("Service", "MemoryDenyWriteExecute")).toEqual([]);
  });
});

describe("systemd-analyze", () => {
  const verify = (...units: string[]) => run(["systemd-analyze", "verify", `--root=${root}`, "--man=no", "--recursive-errors=no", ...units]);

  test("verify passes on both units, against the compiled binaries they start", () => {
    const result = verify("svc-agent.service", "svc-server.service");
    expect(result.err).toBe("");
    expect(result.code).toBe(0);
  });

  test("verify fails on a bad directive or a missing binary (so the passing run checked something)", () => {
    const agent = readFileSync(AGENT_UNIT, "utf8");
    writeFileSync(join(root, "etc/systemd/system/bad-restart.service"), agent.replace("Restart=always", "Restart=sometimes"));
    writeFileSync(join(root, "etc/systemd/system/bad-binary.service"), agent.replace("/usr/local/bin/svc-agent", "/usr/local/bin/absent"));
    expect(verify("bad-restart.service").err).toContain("Failed to parse service restart specifier");
    expect(verify("bad-binary.service").err).toContain("/usr/local/bin/absent is not executable");
  });

  test("the offline security review rates both below 3.0 (systemd's 'OK')", () => {
    const review = ok(["systemd-analyze", "security", "--offline=yes", `--root=${root}`, "--no-pager", "svc-agent.service", "svc-server.service"]);
    const levels = [...review.matchAll(/Overall exposure level for (\S+): ([\d.]+)/g)].map((m) => [m[1], Number(m[2])] as const);
    expect(levels.map(([name]) => name)).toEqual(["svc-agent.service", "svc-server.service"]);
    for (const [, level] of levels) expect(level).toBeLessThan(3);
  });
});

/** The system calls a unit's SystemCallFilter lines allow, with every @group expanded by systemd itself. */
function allowedSyscalls(unit: UnitFile): Set<string> {
  const expand = (name: string): string[] => {
    if (!name.startsWith("@")) return [name];
    const listing = ok(["systemd-analyze", "syscall-filter", "--no-pager", name]).split("\n").slice(1);
    return listing
      .map((line) => line.trim())
      .filter((line) => line !== "" && !line.startsWith("#"))
      .flatMap(expand);
  };
  const lines = directive(unit, "Service", "SystemCallFilter");
  expect(lines[0]?.startsWith("~")).toBe(false); // an allow list first, then what it takes away
  const allowed = new Set<string>();
  for (const line of lines) {
    const deny = line.startsWith("~");
    for (const call of line.replace(/^~/, "").split(/\s+/).flatMap(expand)) deny ? allowed.delete(call) : allowed.add(call);
  }
  return allowed;
}

/** The system call names in an `strace -c` summary. */
function tracedSyscalls(summary: string): string[] {
  return [...summary.matchAll(/^\s*[\d.]+\s+[\d.]+\s+\d+\s+\d+\s+(?:\d+\s+)?(\w+)$/gm)].map((m) => m[1]!).filter((name) => name !== "total");
}

test("every system call of the server and of an agent that enrolls, reports and answers a browse is inside its unit's filter", async () => {
  const admin = bootstrapToken();
  // The server runs as its own user, as under the unit: as root, SQLite also fchown()s its journal.
  const serverDir = join(dir, "server");
  mkdirSync(serverDir);
  const asUser: string[] = [];
  if (IS_ROOT) {
    chmodSync(dir, 0o755);
    chownSync(serverDir, NOBODY, NOBODY);
    asUser.push("setpriv", `--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups");
  }
  const serverTrace = join(serverDir, "server.strace");
  const agentTrace = join(dir, "agent.strace");
  const server = (tracedServer = await startServer({
    command: [...asUser, "strace", "-f", "-c", "-o", serverTrace, serverBinary],
    statePath: join(serverDir, "state.db"),
    env: { SVC_BOOTSTRAP_ADMINTOKEN: admin, SVC_LOGGING_LEVEL: "warn" },
  }));
  const api = async <T>(path: string, init: RequestInit = {}) =>
    (await (
      await fetch(`${server.base}/api/v1${path}`, { ...init, headers: { Authorization: `Bearer ${admin}`, "Content-Type": "application/json" } })
    ).json()) as T;
  const { token } = await api<{ token: string }>("/enrollment-tokens", { method: "POST", body: JSON.stringify({ kind: "agent", maxUses: 1 }) });
  const logs = join(dir, "logs");
  mkdirSync(logs);
  writeFileSync(join(logs, "app.log"), "one\ntwo\n");
  const config = join(dir, "agent.yaml");
  writeFileSync(config, `server:\n  url: ${server.base}\n  token: ${token}\nagent:\n  id: units-agent\nbrowse:\n  allowedRoots: [${logs}]\n`);
  const agent = Bun.spawn(["strace", "-f", "-c", "-o", agentTrace, agentBinary, "--config", config], { stdout: "ignore", stderr: "pipe" });
  children.push(agent);

  await until(async () => (await api<{ discovery: unknown }>("/agents/units-agent")).discovery ?? false, 30_000, 100);
  const listing = await api<{ entries: { name: string }[] }>(`/agents/units-agent/browse?path=${encodeURIComponent(logs)}`);
  expect(listing.entries.map((e) => e.name)).toEqual(["app.log"]);
  const sample = await api<{ content: string }>(`/agents/units-agent/sample?path=${encodeURIComponent(join(logs, "app.log"))}&mode=lines&from=tail`);
  expect(sample.content).toContain("two");

  stopTraced(agent);
  expect(await agent.exited).toBe(0);
  stopTraced(server.proc);
  expect(await server.exited).toBe(0);

  for (const [trace, unit] of [
    [agentTrace, AGENT_UNIT],
    [serverTrace, SERVER_UNIT],
  ] as const) {
    const used = tracedSyscalls(readFileSync(trace, "utf8"));
    expect(used.length).toBeGreaterThan(20);
    const allowed = allowedSyscalls(parseUnit(unit));
    expect({ unit, outside: used.filter((call) => !allowed.has(call)) }).toEqual({ unit, outside: [] });
  }
}, 90_000);

describe.skipIf(!IS_ROOT)("the agent's capability bounding set", () => {
  let listenerPort: number;
  let listener: Subprocess<"ignore", "pipe", "inherit">;
  let config: string;
  let privateLogs: string;

  beforeAll(async () => {
    // Another user's service: a listener run as nobody, its logs in a directory only nobody may read.
    listener = Bun.spawn(
      [
        "setpriv",
        `--reuid=${NOBODY}`,
        `--regid=${NOBODY}`,
        "--clear-groups",
        BUN,
        "-e",
        "const l = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } }); console.log(l.port); setInterval(() => {}, 1e6);",
      ],
      { stdin: "ignore", stdout: "pipe", stderr: "inherit" },
    );
    children.push(listener);
    const reader = listener.stdout.getReader();
    listenerPort = Number(new TextDecoder().decode((await reader.read()).value).trim());
    privateLogs = join(dir, "private");
    mkdirSync(privateLogs);
    writeFileSync(join(privateLogs, "service.log"), "hello\n");
    chownSync(privateLogs, NOBODY, NOBODY);
    chmodSync(privateLogs, 0o700);
    config = join(dir, "capabilities.yaml");
    writeFileSync(
      config,
      [
        "server: { url: https://127.0.0.1:9, token: svcen_abcdefghijklmnopqrstuvwxyz0123456789 }",
        "customFingerprints:",
        "  - name: other-user",
        "    title: A service of another user",
        `    match: { ports: [${listenerPort}] }`,
        `    logPaths: [${privateLogs}/*.log]`,
        `    pipeline: { source: { type: filelog, config: { include: ["${privateLogs}/*.log"] } } }`,
        "",
      ].join("\n"),
    );
  });

  /** What discovery finds of that service with only these capabilities, as systemd would bound them. */
  function discoverWith(capabilities: string[]): { pids: number[]; logFiles: string[] } {
    const bounding = ["-all", ...capabilities.map((cap) => `+${cap.replace(/^CAP_/, "").toLowerCase()}`)].join(",");
    const report = JSON.parse(ok(["setpriv", `--bounding-set=${bounding}`, agentBinary, "discover", "--config", config, "--json"])) as {
      services: { fingerprint: string; pids: number[]; logFiles: string[] }[];
    };
    const service = report.services.find((s) => s.fingerprint === "other-user");
    if (!service) throw new Error(`the port ${listenerPort} was not found at all: ${JSON.stringify(report.services.map((s) => s.fingerprint))}`);
    return { pids: service.pids, logFiles: service.logFiles };
  }

  test("suffices to find the other user's process and log file, and each capability is needed", () => {
    const unitCaps = directive(parseUnit(AGENT_UNIT), "Service", "CapabilityBoundingSet")[0]!.split(" ");
    expect(discoverWith(unitCaps)).toEqual({ pids: [listener.pid], logFiles: [join(privateLogs, "service.log")] });
    // Without CAP_SYS_PTRACE the port's owner stays unknown: other users' /proc/<pid>/fd are closed.
    expect(discoverWith(unitCaps.filter((cap) => cap !== "CAP_SYS_PTRACE")).pids).toEqual([]);
    // Without CAP_DAC_READ_SEARCH root cannot list the other user's 0700 directory.
    expect(discoverWith(unitCaps.filter((cap) => cap !== "CAP_DAC_READ_SEARCH")).logFiles).toEqual([]);
  });
});
