/**
 * Target (docs/architecture.md): OpAMP at fleet scale — server memory per WebSocket session,
 * and "publish to 10,000 collectors all APPLIED ≤ 10 s".
 *
 * Seeds N opamp collectors with per-collector tokens and known instance_uids
 * (so they connect as after a server restart), starts the real server as a
 * child process, and connects N raw WebSocket agents (header 0x00 + protobuf)
 * from several client processes (the box has 2 cores; one Bun process per
 * few thousand sockets keeps the clients off the server's core as much as
 * possible). Server RSS is read from /proc/<pid>/status before and after the
 * sessions open. Then one `POST /publish` changes every collector's target;
 * the clock runs until every agent has received its config and sent APPLIED
 * and `GET /publish/status` counts every collector `current`.
 *
 * With replicas=2 the collectors live in a fresh PostgreSQL database
 * (SVC_BENCH_POSTGRES_URI, default postgres://postgres@127.0.0.1:5432, dropped
 * after) served by two server processes; client processes alternate between
 * them and the publish goes to the first, so the second replica's collectors
 * get their configs through the change feed (docs/architecture.md "Performance targets": within 1 s).
 *
 * Usage: bun bench/opamp.ts [collectors=10000] [clientProcesses=4] [replicas=1]
 */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AgentCapabilities, AgentToServerSchema, ServerToAgentSchema } from "../server/gen/opamp/v1/opamp_pb.ts";
import { SQL } from "bun";
import { PostgresStore } from "../server/store/postgres.ts";
import { SqliteStore } from "../server/store/sqlite.ts";
import type { Store } from "../server/store/store.ts";
import { applied, description } from "../test/opamp/helpers.ts";
import { seedOpampFleet } from "../test/faults/storm.ts";
import { freePort } from "../test/process/spawn.ts";
import { rssKiB } from "./lib.ts";

interface Agent {
  token: string;
  uid: string;
}

if (process.argv[2] === "client") await client(process.argv[3]!, process.argv[4]!);
else await main();

/** One client process: connects its agents, applies every config it is sent, reports counts on stdout. */
async function client(url: string, file: string): Promise<void> {
  const agents = JSON.parse(readFileSync(file, "utf8")) as Agent[];
  const caps =
    BigInt(AgentCapabilities.AgentCapabilities_ReportsStatus) |
    BigInt(AgentCapabilities.AgentCapabilities_AcceptsRemoteConfig) |
    BigInt(AgentCapabilities.AgentCapabilities_ReportsRemoteConfig) |
    BigInt(AgentCapabilities.AgentCapabilities_ReportsHeartbeat);
  const frame = (body: Uint8Array) => {
    const out = new Uint8Array(body.length + 1);
    out.set(body, 1);
    return out;
  };
  let ready = 0;
  let appliedCount = 0;
  let failed = 0;
  const report = () => console.log(JSON.stringify({ ready, applied: appliedCount, failed }));
  const timer = setInterval(report, 200);
  const agentDescription = description({ "service.name": "bench" });
  const open = (agent: Agent) =>
    new Promise<void>((resolve) => {
      const uid = Buffer.from(agent.uid, "hex");
      let seq = 0n;
      let first = true;
      const ws = new WebSocket(url, { headers: { Authorization: `Bearer ${agent.token}` } } as unknown as string[]);
      ws.binaryType = "arraybuffer";
      const send = (fields: Record<string, unknown>) =>
        ws.send(frame(toBinary(AgentToServerSchema, create(AgentToServerSchema, { instanceUid: uid, sequenceNum: ++seq, capabilities: caps, ...fields }))));
      ws.onopen = () => send({ agentDescription });
      ws.onmessage = (event) => {
        const message = fromBinary(ServerToAgentSchema, new Uint8Array(event.data as ArrayBuffer).subarray(1));
        if (first) {
          first = false;
          ready++;
          resolve();
        }
        if (message.remoteConfig) {
          send({ remoteConfigStatus: applied(message.remoteConfig.configHash) });
          appliedCount++;
        }
      };
      ws.onerror = () => {
        failed++;
        resolve();
      };
    });
  // A bounded number of handshakes in flight at a time.
  let next = 0;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (next < agents.length) await open(agents[next++]!);
    }),
  );
  report();
  process.on("SIGTERM", () => {
    clearInterval(timer);
    process.exit(0);
  });
}

async function main(): Promise<void> {
  const [count = 10_000, processes = 4, replicas = 1] = process.argv.slice(2).map(Number);
  const dir = mkdtempSync(join(tmpdir(), "svc-bench-opamp-"));
  const statePath = join(dir, "state.db");
  const adminToken = "svcsa_" + "B".repeat(40);
  const pgBase = new URL(process.env.SVC_BENCH_POSTGRES_URI || "postgres://postgres@127.0.0.1:5432");
  const database = `svc_bench_${Date.now().toString(36)}`;
  const pgAdmin = replicas > 1 ? new SQL(new URL("/postgres", pgBase).toString(), { max: 1 }) : null;
  await pgAdmin?.unsafe(`CREATE DATABASE "${database}"`);
  const databaseUri = new URL(`/${database}`, pgBase).toString();

  // Seed: collectors, their tokens, instance → collector, and a placeholder target so the publish covers them all.
  const store: Store = pgAdmin ? await PostgresStore.open(databaseUri) : new SqliteStore(statePath);
  const agents: Agent[] = await seedOpampFleet(store, count, "opamp");
  await store.close();

  const ports = Array.from({ length: Math.max(1, replicas) }, () => freePort());
  const external = pgAdmin ? { SVC_STORAGE_BACKEND: "external", SVC_DATABASE_URI: databaseUri, SVC_SECRETS_KEY: randomBytes(32).toString("base64") } : {};
  const servers = ports.map((port) =>
    Bun.spawn([process.execPath, join(import.meta.dir, "../server/main.ts")], {
      env: {
        ...process.env,
        SVC_LISTEN: `127.0.0.1:${port}`,
        SVC_STORAGE_BOLTPATH: statePath,
        SVC_BOOTSTRAP_ADMINTOKEN: adminToken,
        SVC_LOGGING_LEVEL: "error",
        ...external,
      },
      // Errors only: the log shows why a step failed.
      stdout: "inherit",
      stderr: "inherit",
    }),
  );
  const base = `http://127.0.0.1:${ports[0]}`;
  const api = async (path: string, method = "GET", json?: unknown) => {
    const res = await fetch(`${base}/api/v1${path}`, {
      method,
      headers: { Authorization: `Bearer ${adminToken}`, ...(json ? { "Content-Type": "application/json" } : {}) },
      body: json ? JSON.stringify(json) : undefined,
    });
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<Record<string, unknown>>;
  };
  const clients: ReturnType<typeof Bun.spawn>[] = [];
  try {
    for (const port of ports) {
      const deadline = performance.now() + 60_000;
      while (
        !(await fetch(`http://127.0.0.1:${port}/readyz`).then(
          (r) => r.ok,
          () => false,
        ))
      ) {
        if (performance.now() > deadline) throw new Error(`the server on port ${port} was not ready within 60 s`);
        await Bun.sleep(25);
      }
    }
    // A commit to publish: one source, nothing routed, so every collector renders the same small config.
    await api("/sources", "POST", { name: "bench logs", type: "filelog", config: { include: ["/var/log/bench/*.log"] } });
    await api("/commit", "POST", { message: "bench" });
    await api("/collectors?limit=1"); // warm the registry view
    await Bun.sleep(500);
    const rssBefore = servers.reduce((sum, s) => sum + rssKiB(s.pid), 0);

    const perProcess = Math.ceil(count / processes);
    const progress = Array.from({ length: processes }, () => ({ ready: 0, applied: 0, failed: 0 }));
    const connectStarted = performance.now();
    for (let p = 0; p < processes; p++) {
      const file = join(dir, `agents-${p}.json`);
      writeFileSync(file, JSON.stringify(agents.slice(p * perProcess, (p + 1) * perProcess)));
      const child = Bun.spawn([process.execPath, import.meta.path, "client", `ws://127.0.0.1:${ports[p % ports.length]}/v1/opamp`, file], {
        stdout: "pipe",
        stderr: "inherit",
      });
      clients.push(child);
      void (async () => {
        let buffer = "";
        for await (const chunk of child.stdout as unknown as AsyncIterable<Uint8Array>) {
          buffer += new TextDecoder().decode(chunk);
          const lines = buffer.split("\n");
          buffer = lines.pop()!;
          for (const line of lines) if (line.trim()) progress[p] = JSON.parse(line);
        }
      })();
    }
    const total = (key: "ready" | "applied" | "failed") => progress.reduce((n, p) => n + p[key], 0);
    while (total("ready") + total("failed") < count) {
      if (performance.now() - connectStarted > 300_000) throw new Error(`only ${total("ready")} of ${count} agents connected in 300 s`);
      await Bun.sleep(100);
    }
    const connectSeconds = (performance.now() - connectStarted) / 1000;
    const connected = total("ready");
    await Bun.sleep(1500); // let coalesced presence writes settle
    const rssAfter = servers.reduce((sum, s) => sum + rssKiB(s.pid), 0);
    console.log(`collectors: ${count}, client processes: ${processes}, server replicas: ${ports.length}${pgAdmin ? " (PostgreSQL)" : " (embedded)"}`);
    console.log(`connected ${connected} WebSocket agents (${total("failed")} failed) in ${connectSeconds.toFixed(1)} s`);
    console.log(
      `server RSS ${(rssBefore / 1024).toFixed(0)} MiB before, ${(rssAfter / 1024).toFixed(0)} MiB after: ${((rssAfter - rssBefore) / connected).toFixed(1)} KiB per session`,
    );

    const started = performance.now();
    const rollout = await api("/publish", "POST");
    const publishMs = performance.now() - started;
    console.log(`POST /publish answered in ${publishMs.toFixed(0)} ms (${(rollout.changed as string[]).length} targets changed)`);
    /** Per replica: when every collector connected to it had its config. */
    const doneAt = ports.map(() => 0);
    const onReplica = (r: number, key: "ready" | "applied") => progress.reduce((n, p, i) => n + (i % ports.length === r ? p[key] : 0), 0);
    while (doneAt.some((t) => t === 0)) {
      if (performance.now() - started > 120_000) throw new Error(`only ${total("applied")} of ${connected} applied in 120 s`);
      ports.forEach((_, r) => {
        if (doneAt[r] === 0 && onReplica(r, "applied") >= onReplica(r, "ready")) doneAt[r] = performance.now();
      });
      await Bun.sleep(20);
    }
    if (ports.length > 1) {
      doneAt.forEach((t, r) =>
        console.log(
          `replica ${r === 0 ? "A (published on)" : "B (via the change feed)"}: its ${onReplica(r, "ready")} collectors had their configs ${((t - started) / 1000).toFixed(2)} s after the publish started`,
        ),
      );
    }
    const allAppliedSent = (performance.now() - started) / 1000;
    console.log(`every agent had its config and sent APPLIED ${allAppliedSent.toFixed(2)} s after the publish started`);
    for (;;) {
      const status = (await api("/publish/status")) as { counts: Record<string, number>; state: string };
      if (status.counts.current === connected) {
        console.log(
          `GET /publish/status: ${status.state}, ${status.counts.current} current, ${((performance.now() - started) / 1000).toFixed(2)} s after the publish started`,
        );
        break;
      }
      if (performance.now() - started > 120_000) throw new Error(`status still ${JSON.stringify(status.counts)} after 120 s`);
      await Bun.sleep(100);
    }
    console.log(`server RSS after the rollout: ${(servers.reduce((sum, s) => sum + rssKiB(s.pid), 0) / 1024).toFixed(0)} MiB`);
  } finally {
    servers.forEach((s, i) => s.exitCode !== null && console.log(`server ${i} exited early: code ${s.exitCode} signal ${s.signalCode}`));
    for (const c of clients) c.kill();
    for (const s of servers) s.kill();
    await Promise.all(servers.map((s) => s.exited));
    rmSync(dir, { recursive: true, force: true });
    await pgAdmin?.unsafe(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    await pgAdmin?.close();
  }
}
