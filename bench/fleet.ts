/**
 * Target (docs/architecture.md "Performance targets", issue 22): a fleet of
 * 100,000 collectors on one server — publish → every collector has its new
 * config in ≤ 10 s, server memory ≤ 15 KiB per collector, `GET
 * /collectors?match=` p99 ≤ 100 ms during the rollout.
 *
 * The fleet: half OpAMP, half Alloy-style remote-config pollers. The server
 * holds at most RLIMIT_NOFILE descriptors (20,000 on the bench box, hard), so
 * only `ws` OpAMP agents hold WebSocket sessions (default: as many as fit,
 * 17,500); the rest of the OpAMP half poll over OpAMP-over-HTTP. Every poller
 * (OpAMP HTTP and remote config) polls every `pollSeconds` (60) from a random
 * phase. Collector records, tokens and OpAMP instance rows are seeded into the
 * state file; every collector has five attributes (env, region, team, tier,
 * zone) which its agent also reports (AgentDescription non-identifying
 * attributes; GetConfig local_attributes), so the seeded record already holds
 * what the first report says and connecting writes nothing. The five keys are
 * trusted (fleet.trustedAttributes), so the matchers read those reports.
 *
 * Config: 20 filelog sources, 4 OTLP/HTTP destinations and 20 pipelines
 * (source → batch → destination) with matchers over the five attributes;
 * every collector matches several. With `--inject` the destinations send to
 * `https://{{attr "region"}}.otlp<d>.example.com` with a header
 * `X-Collector: {{attr "collector.name"}}` (the attribute injection of issue
 * 22 part 3; host paths cannot hold references), so every collector's config
 * is distinct; without it, collectors share configs per matched pipeline set.
 *
 * Steps: seed; start `server/main.ts`; create the config, commit and publish
 * it (v1, before any agent connects); open the WebSocket agents; start the
 * pollers and wait until every one holds v1, and one more poll interval (the
 * pollers report v1's status on the poll after it); measure server RSS; change the
 * batch timeout of 10 pipelines, commit (v2); `mark` every client; `POST
 * /publish`; the clock runs until every WebSocket agent has v2 (and sent
 * APPLIED) and every poller's next poll answered v2. A separate query process
 * runs `GET /collectors?match=…` (10 a second, an open loop) before and during
 * the rollout.
 * CPU of the server and of each load process is read from /proc.
 *
 * Usage: bun bench/fleet.ts [collectors=10000] [--ws N] [--poll-seconds 60]
 *        [--ws-processes 4] [--poll-processes 3] [--poll-in-flight 256] [--inject] [--cpu-prof DIR]
 *        [--server-binary dist/svc-server]
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hashToken, mintToken } from "../server/auth/tokens.ts";
import { boundReported } from "../server/collectors/attributes.ts";
import { SqliteStore } from "../server/store/sqlite.ts";
import type { Collector } from "../shared/collectors.ts";
import { freePort } from "../test/process/spawn.ts";
import type { ClientProgress, FleetAgent } from "./fleet-clients.ts";
import { cpuSeconds, rssKiB } from "./lib.ts";

const argv = process.argv.slice(2);
const option = (name: string, fallback: number) => {
  const at = argv.indexOf(name);
  return at >= 0 ? Number(argv[at + 1]) : fallback;
};
const count = Number(argv.find((a, i) => /^\d+$/.test(a) && !argv[i - 1]?.startsWith("--")) ?? 10_000);
const opampCount = Math.floor(count / 2);
const wsCount = Math.min(opampCount, option("--ws", 17_500));
const pollSeconds = option("--poll-seconds", 60);
const wsProcesses = option("--ws-processes", 4);
const pollProcesses = option("--poll-processes", 3);
/** Polls in flight (so keep-alive connections) per poll process; the server's descriptors (20,000) hold the WebSocket sessions and these. */
const pollInFlight = option("--poll-in-flight", 256);
const inject = argv.includes("--inject");
const profileDir = argv.includes("--cpu-prof") ? argv[argv.indexOf("--cpu-prof") + 1]! : null;
/** The compiled server (`bun run build`: dist/svc-server) instead of server/main.ts from source: what is shipped, worker entry points and all. */
const serverBinary = argv.includes("--server-binary") ? argv[argv.indexOf("--server-binary") + 1]! : null;

const REGIONS = ["us-east", "us-west", "eu-west", "eu-north", "ap-south"];
const TEAMS = ["payments", "search", "ingest", "edge"];
const TIERS = ["web", "db", "batch"];

/** Collector i's five attributes, spread independently of each other. */
function attributesOf(i: number): Record<string, string> {
  const h = Math.imul(i + 1, 2654435761) >>> 0;
  const region = REGIONS[h % 5]!;
  return {
    env: (h >>> 5) % 3 === 0 ? "prod" : "staging",
    region,
    team: TEAMS[(h >>> 8) % 4]!,
    tier: TIERS[(h >>> 11) % 3]!,
    zone: `${region}-${"abc"[(h >>> 14) % 3]}`,
  };
}

/** The 20 pipelines' matchers; the first ten are the ones the measured commit changes (every collector matches one region pipeline). */
const MATCHERS: string[][] = [
  ...REGIONS.map((r) => [`region="${r}"`]),
  ...TEAMS.map((t) => [`team="${t}"`]),
  ['region=~"us-.*"', "env=prod"],
  ["env=prod"],
  ["env!=prod"],
  ...TIERS.map((t) => [`tier="${t}"`]),
  ['region=~"eu-.*"', "team!=edge"],
  ['zone=~".*-a"'],
  ['tier!~"db|batch"', "env=staging"],
  ['team=~"payments|search"', 'region!~"ap-.*"'],
  ['zone=~"us-east-.*"', "tier=db"],
];

const mib = (kib: number) => `${(kib / 1024).toFixed(0)} MiB`;
const secs = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

/** Seeds every collector with its token, attributes as reported, and (OpAMP) its instance row. */
async function seed(statePath: string): Promise<FleetAgent[]> {
  const store = new SqliteStore(statePath);
  const now = new Date().toISOString();
  const agents: FleetAgent[] = [];
  let ops = [];
  try {
    for (let i = 0; i < count; i++) {
      const id = Bun.randomUUIDv7();
      const token = mintToken("collector");
      const attributes = attributesOf(i);
      const kind = i < wsCount ? "ws" : i < opampCount ? "opamp-http" : "rcfg";
      const uid = kind === "rcfg" ? undefined : Bun.randomUUIDv7().replaceAll("-", "");
      agents.push({ id, token, kind, attributes, ...(uid ? { uid } : {}) });
      const collector: Collector = {
        id,
        name: `fleet-${i}`,
        environment: null,
        managementMode: kind === "rcfg" ? "rcfg-remotecfg" : "opamp",
        tags: {},
        reported: boundReported(Object.entries(attributes)),
        status: "pending",
        lastSeen: null,
        health: null,
        createdAt: now,
        updatedAt: now,
      };
      ops.push(
        { op: "put" as const, collection: "collectors", id, data: collector },
        { op: "put" as const, collection: "tokens", id: hashToken(token), data: { kind: "collector", subjectId: id, createdAt: now } },
        { op: "put" as const, collection: "collector_tokens", id, data: { digest: hashToken(token), createdAt: now, createdBy: "seed" } },
      );
      if (uid) ops.push({ op: "put" as const, collection: "opamp_instances", id: uid, data: { collectorId: id, since: now } });
      if (ops.length >= 5000) {
        await store.write(ops);
        ops = [];
      }
    }
    if (ops.length > 0) await store.write(ops);
  } finally {
    await store.close();
  }
  return agents;
}

interface Child {
  proc: ReturnType<typeof Bun.spawn>;
  latest: ClientProgress;
  lines: string[];
  send(line: string): void;
}

function spawnClient(args: string[]): Child {
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, "fleet-clients.ts"), ...args], { stdin: "pipe", stdout: "pipe", stderr: "inherit" });
  const child: Child = {
    proc,
    latest: { ready: 0, changed: 0, lastChangeAt: 0, stale: 0, polls: 0, errors: 0, maxLagMs: 0 },
    lines: [],
    send(line) {
      const stdin = proc.stdin as import("bun").FileSink;
      stdin.write(line + "\n");
      stdin.flush();
    },
  };
  void (async () => {
    let buffer = "";
    const decoder = new TextDecoder();
    for await (const chunk of proc.stdout as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      const lines = buffer.split("\n");
      buffer = lines.pop()!;
      for (const line of lines) {
        if (!line.trim()) continue;
        const parsed = JSON.parse(line) as ClientProgress & { label?: string };
        if (parsed.label !== undefined) child.lines.push(line);
        else child.latest = parsed;
      }
    }
  })();
  return child;
}

const sum = (children: Child[], key: keyof ClientProgress) => children.reduce((n, c) => n + c.latest[key], 0);
const max = (children: Child[], key: keyof ClientProgress) => children.reduce((n, c) => Math.max(n, c.latest[key]), 0);

/** Waits until `done`; prints `detail()` every 15 s meanwhile, and fails with it after `ms`. */
async function until(what: string, ms: number, done: () => boolean, detail: () => string): Promise<number> {
  const started = performance.now();
  let shown = started;
  while (!done()) {
    const now = performance.now();
    if (now - started > ms) throw new Error(`${what}: not within ${secs(ms)}; ${detail()}`);
    if (now - shown > 15_000) {
      shown = now;
      console.log(`  … ${what}, ${secs(now - started)}: ${detail()}`);
    }
    await Bun.sleep(50);
  }
  return performance.now() - started;
}

async function main(): Promise<void> {
  // Client sockets to one server address: the widest ephemeral range (writable here; ignored where not).
  try {
    writeFileSync("/proc/sys/net/ipv4/ip_local_port_range", "1024 65535");
  } catch {}
  const dir = mkdtempSync(join(tmpdir(), "svc-bench-fleet-"));
  const statePath = join(dir, "state.db");
  const adminToken = "svcsa_" + "F".repeat(40);
  let t = performance.now();
  const agents = await seed(statePath);
  const ws = agents.filter((a) => a.kind === "ws");
  const pollers = agents.filter((a) => a.kind !== "ws");
  console.log(
    `collectors: ${count} (${ws.length} OpAMP WebSocket, ${opampCount - ws.length} OpAMP HTTP, ${count - opampCount} remote-config pollers every ${pollSeconds} s, ` +
      `${pollProcesses} poll processes with ${pollInFlight} polls in flight each)` +
      `; injection ${inject ? "on" : "off"}; seeded in ${secs(performance.now() - t)}`,
  );

  const port = freePort();
  const logPath = join(dir, "server.log");
  const server = Bun.spawn(
    serverBinary !== null
      ? [serverBinary]
      : [process.execPath, ...(profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : []), join(import.meta.dir, "../server/main.ts")],
    {
      env: {
        ...process.env,
        SVC_LISTEN: `127.0.0.1:${port}`,
        SVC_STORAGE_BOLTPATH: statePath,
        SVC_BOOTSTRAP_ADMINTOKEN: adminToken,
        SVC_LOGGING_LEVEL: "warn",
        // The matchers read the reported attributes: an admin trusts their keys (docs/architecture.md "Trust model").
        SVC_FLEET_TRUSTEDATTRIBUTES: "env,region,team,tier,zone",
        // One admin token drives the setup and the query loop: lift its rate limit.
        SVC_RATELIMIT_API_PERSECOND: "1000000",
        SVC_RATELIMIT_API_BURST: "1000000",
      },
      // Its log (warnings and up) goes to a file, summed up at the end.
      stdout: Bun.file(logPath),
      stderr: "inherit",
    },
  );
  const base = `http://127.0.0.1:${port}`;
  const api = async <T = Record<string, unknown>>(path: string, method = "GET", json?: unknown): Promise<T> => {
    const res = await fetch(`${base}/api/v1${path}`, {
      method,
      headers: { Authorization: `Bearer ${adminToken}`, ...(json ? { "Content-Type": "application/json" } : {}) },
      body: json ? JSON.stringify(json) : undefined,
    });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  const children: Child[] = [];
  try {
    t = performance.now();
    while (
      !(await fetch(`${base}/readyz`).then(
        (r) => r.ok,
        () => false,
      ))
    ) {
      if (performance.now() - t > 120_000) throw new Error("the server was not ready within 120 s");
      await Bun.sleep(50);
    }
    console.log(`server ready in ${secs(performance.now() - t)}; RSS ${mib(rssKiB(server.pid))}`);

    // The config: 20 sources, 4 destinations, 20 pipelines with matchers.
    const destinations: string[] = [];
    for (let d = 0; d < 4; d++) {
      const config = inject
        ? // Header values are secrets unless marked otherwise, and a secret is never filled in per collector.
          { endpoint: `https://{{attr "region"}}.otlp${d}.example.com`, headers: { "X-Collector": { value: '{{attr "collector.name"}}', secret: false } } }
        : { endpoint: `https://otlp${d}.example.com` };
      destinations.push((await api<{ id: string }>("/destinations", "POST", { name: `backend ${d}`, type: "otlphttp", config })).id);
    }
    const topology = (source: string, p: number, timeout: string) => ({
      nodes: [
        { id: "in", kind: "source", ref: source },
        { id: "batch", kind: "processor", processor: { type: "batch", config: { timeout } } },
        { id: "out", kind: "destination", ref: destinations[p % 4] },
      ],
      edges: [
        { id: "e1", source: "in", target: "batch" },
        { id: "e2", source: "batch", target: "out" },
      ],
    });
    const pipelines: string[] = [];
    const sources: string[] = [];
    for (const [p, matchers] of MATCHERS.entries()) {
      const source = (
        await api<{ id: string }>("/sources", "POST", { name: `app ${p}`, type: "filelog", config: { include: [`/var/log/fleet/app${p}/*.log`] } })
      ).id;
      sources.push(source);
      pipelines.push(
        (await api<{ id: string }>("/pipelines", "POST", { name: `fleet ${p}`, signal: "logs", topology: topology(source, p, "200ms"), matchers })).id,
      );
    }
    await api("/commit", "POST", { message: "fleet v1" });
    t = performance.now();
    const first = await api<{ changed: string[] }>("/publish", "POST");
    console.log(`v1: POST /publish answered in ${secs(performance.now() - t)} (${first.changed.length} targets, no agent connected)`);

    // WebSocket agents, then pollers; wait until every agent holds v1.
    t = performance.now();
    // Round robin, so every poll process carries both kinds of poller.
    const per = (list: FleetAgent[], n: number) => Array.from({ length: n }, (_, p) => list.filter((_, i) => i % n === p));
    const wsChildren = per(ws, wsProcesses).map((slice, p) => {
      const file = join(dir, `ws-${p}.json`);
      writeFileSync(file, JSON.stringify(slice));
      return spawnClient(["ws", `${base.replace(/^http/, "ws")}/v1/opamp`, file, "30"]);
    });
    children.push(...wsChildren);
    const connectMs = await until(
      "WebSocket agents holding v1",
      600_000,
      () => sum(wsChildren, "ready") >= ws.length,
      () => `ready ${sum(wsChildren, "ready")}, errors ${sum(wsChildren, "errors")}`,
    );
    console.log(
      `${ws.length} WebSocket agents connected and applied v1 in ${secs(connectMs)} (${sum(wsChildren, "errors")} errors); RSS ${mib(rssKiB(server.pid))}`,
    );
    t = performance.now();
    const pollChildren = per(pollers, pollProcesses).map((slice, p) => {
      const file = join(dir, `poll-${p}.json`);
      writeFileSync(file, JSON.stringify(slice));
      return spawnClient(["poll", base, file, String(pollSeconds), String(pollInFlight)]);
    });
    children.push(...pollChildren);
    const pollDetail = () =>
      `${sum(pollChildren, "ready")} hold it, ${sum(pollChildren, "polls")} polls answered, ${sum(pollChildren, "errors")} errors, ` +
      `longest wait for a slot ${max(pollChildren, "maxLagMs")} ms, server CPU ${cpuSeconds(server.pid).toFixed(0)} s so far`;
    // The first round is the heaviest (first contact: presence, the config's first delivery and its status): several intervals allowed.
    const pollMs = await until("pollers holding v1", 5 * pollSeconds * 1000 + 120_000, () => sum(pollChildren, "ready") >= pollers.length, pollDetail);
    console.log(`${pollers.length} pollers hold v1 after ${secs(pollMs)} (${sum(pollChildren, "errors")} errors)`);

    const query = spawnClient([
      "query",
      base,
      adminToken,
      "10",
      `/api/v1/collectors?match=${encodeURIComponent('region="eu-west"')}`,
      `/api/v1/collectors?match=${encodeURIComponent("env=prod")}&match=${encodeURIComponent('team=~"pay.*"')}`,
    ]);
    children.push(query);
    const window = async (label: string, run: () => Promise<void>) => {
      query.send(`window ${label}`);
      await run();
      const before = query.lines.length;
      query.send("end");
      await until(
        "query summary",
        10_000,
        () => query.lines.length > before,
        () => "",
      );
      const r = JSON.parse(query.lines.at(-1)!) as { requests: number; errors: number; p50: number; p99: number; max: number };
      console.log(
        `GET /collectors?match= ${label}: ${r.requests} requests (${r.errors} errors), p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms, max ${r.max.toFixed(1)} ms`,
      );
    };
    // A remote-config poller reports a config's status on the poll after the one that brought it: one more interval,
    // so the steady state measured is polls and heartbeats alone, not the wave of first status reports.
    await Bun.sleep(pollSeconds * 1000 + 2000);
    const v1 = await api<{ state: string; counts: Record<string, number> }>("/publish/status");
    console.log(`one poll interval later, GET /publish/status of v1: ${v1.state} ${JSON.stringify(v1.counts)}`);
    const rss = rssKiB(server.pid);
    console.log(`steady state, every agent on v1: server RSS ${mib(rss)} = ${(rss / count).toFixed(1)} KiB per collector (target ≤ 15 KiB)`);
    const cpu0 = cpuSeconds(server.pid);
    await window("steady (10 s, pollers polling)", () => Bun.sleep(10_000));
    console.log(`steady: server CPU ${(((cpuSeconds(server.pid) - cpu0) / 10) * 100).toFixed(0)} % of one core`);

    // The measured change: 10 pipelines' batch timeout, one commit.
    for (let p = 0; p < 10; p++) {
      await api(`/pipelines/${pipelines[p]}`, "PUT", { name: `fleet ${p}`, signal: "logs", topology: topology(sources[p]!, p, "300ms") });
    }
    await api("/commit", "POST", { message: "fleet v2: 10 pipelines" });
    for (const c of children) if (c !== query) c.send("mark");
    await Bun.sleep(500);

    const cpuBefore = new Map(children.map((c) => [c, cpuSeconds(c.proc.pid)]));
    const serverCpuBefore = cpuSeconds(server.pid);
    let wsDone = 0;
    let answeredMs = 0;
    let changedCount = 0;
    const started = performance.now();
    const publishedAt = Date.now();
    await window("during the rollout", async () => {
      const publish = api<{ changed: string[] }>("/publish", "POST").then((r) => {
        answeredMs = performance.now() - started;
        changedCount = r.changed.length;
        for (const c of pollChildren) c.send(`published ${Date.now()}`);
      });
      wsDone = await until(
        "WebSocket agents on v2",
        300_000,
        () => sum(wsChildren, "changed") >= ws.length,
        () => `${sum(wsChildren, "changed")} of ${ws.length} on v2`,
      );
      await publish;
      await until(
        "pollers on v2",
        5 * pollSeconds * 1000 + 120_000,
        () => sum(pollChildren, "changed") >= pollers.length,
        () => `${sum(pollChildren, "changed")} of ${pollers.length} on v2; ${pollDetail()}`,
      );
    });
    const elapsed = (performance.now() - started) / 1000;
    console.log(`v2: POST /publish answered in ${secs(answeredMs)} (${changedCount} targets changed)`);
    console.log(`every WebSocket agent had v2 (and sent APPLIED) ${secs(wsDone)} after the publish started`);
    const lastPollChange = Math.max(...pollChildren.map((c) => c.latest.lastChangeAt)) - publishedAt;
    console.log(
      `every poller had v2 ${secs(lastPollChange)} after the publish started (poll interval ${pollSeconds} s); ` +
        `polls started after the publish was answered that still got v1: ${sum(pollChildren, "stale")}; ` +
        `poll errors ${sum(pollChildren, "errors")}; largest wait of a due poll for a free slot of its load process (grows while the server answers slowly) ${max(pollChildren, "maxLagMs")} ms`,
    );
    console.log(
      `server CPU over the rollout (${elapsed.toFixed(1)} s): ${(((cpuSeconds(server.pid) - serverCpuBefore) / elapsed) * 100).toFixed(0)} % of one core`,
    );
    for (const [name, group] of [
      ["WebSocket", wsChildren],
      ["poll", pollChildren],
      ["query", [query]],
    ] as const) {
      let used = 0;
      for (const c of group) used += cpuSeconds(c.proc.pid) - cpuBefore.get(c)!;
      console.log(`  ${name} load processes (${group.length}): ${((used / elapsed) * 100).toFixed(0)} % of one core together`);
    }
    const status = await api<{ state: string; counts: Record<string, number> }>("/publish/status");
    console.log(`GET /publish/status: ${status.state} ${JSON.stringify(status.counts)}`);
    const after = rssKiB(server.pid);
    console.log(`server RSS after the rollout ${mib(after)} = ${(after / count).toFixed(1)} KiB per collector`);
  } finally {
    if (server.exitCode !== null) console.log(`the server exited early: code ${server.exitCode} signal ${server.signalCode}`);
    const log = readFileSync(logPath, "utf8")
      .split("\n")
      .filter((line) => line.startsWith("{"));
    console.log(`server log: ${log.length} warnings or errors${log.length > 0 ? `, the first: ${log.slice(0, 3).join("\n")}` : ""}`);
    for (const c of children) c.proc.kill("SIGKILL");
    // SIGTERM lets --cpu-prof write its profile.
    server.kill("SIGTERM");
    await server.exited;
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
