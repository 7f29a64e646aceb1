/**
 * Target (docs/architecture.md): 20 concurrent activations on one collector finish with
 * p99 under 1 s and none answered 409, on two PostgreSQL replicas as on the embedded store.
 * Starts the real server as child processes (one on a fresh SQLite file; two on one fresh
 * PostgreSQL database at 127.0.0.1:5432, or SVC_TEST_POSTGRES_URI), then per round makes a
 * collector and 20 sources and activates all 20 on it at once, spread over the replicas.
 * Usage: bun bench/activations.ts [rounds=10] [writers=20]
 */
import { randomBytes } from "node:crypto";
import { testDatabases } from "../server/store/testdb.ts";
import { bootstrapToken, killAll, removeTempDirs, startServer, tempDir, type ServerProcess } from "../test/process/spawn.ts";
import { percentile } from "./lib.ts";

const [rounds = 10, writers = 20] = process.argv.slice(2).map(Number);
const token = bootstrapToken();

async function call(server: ServerProcess, path: string, method: string, json?: unknown): Promise<{ status: number; body: { id?: string } }> {
  const res = await fetch(`${server.base}/api/v1${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(json === undefined ? {} : { "Content-Type": "application/json" }) },
    ...(json === undefined ? {} : { body: JSON.stringify(json) }),
  });
  return { status: res.status, body: (await res.json().catch(() => ({}))) as { id?: string } };
}

async function created(server: ServerProcess, path: string, json: unknown): Promise<string> {
  const answer = await call(server, path, "POST", json);
  if (answer.status !== 201) throw new Error(`POST ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body.id!;
}

/** `rounds` rounds of `writers` concurrent activations on one new collector, writer i on replica i mod n. */
async function measure(label: string, replicas: ServerProcess[]): Promise<void> {
  const latencies: number[] = [];
  const refused = new Map<number, number>();
  let slowestRound = 0;
  for (let round = 0; round < rounds; round++) {
    const collector = await created(replicas[0]!, "/collectors", { name: `busy-${round}` });
    const sources: string[] = [];
    for (let i = 0; i < writers; i++) {
      sources.push(
        await created(replicas[0]!, "/sources", { name: `s-${round}-${i}`, type: "filelog", config: { include: [`/var/log/s-${round}-${i}.log`] } }),
      );
    }
    const started = performance.now();
    await Promise.all(
      sources.map(async (sourceId, i) => {
        const t0 = performance.now();
        const { status } = await call(replicas[i % replicas.length]!, `/collectors/${collector}/sources`, "POST", { sourceId, configOverrides: {} });
        latencies.push(performance.now() - t0);
        if (status !== 201) refused.set(status, (refused.get(status) ?? 0) + 1);
      }),
    );
    slowestRound = Math.max(slowestRound, performance.now() - started);
  }
  latencies.sort((x, y) => x - y);
  const answers = [...refused].map(([status, n]) => `${n}× ${status}`).join(", ") || "none";
  console.log(
    `${label}: ${latencies.length} activations (${rounds} rounds of ${writers}); p50 ${percentile(latencies, 50).toFixed(0)} ms, ` +
      `p99 ${percentile(latencies, 99).toFixed(0)} ms, max ${latencies[latencies.length - 1]!.toFixed(0)} ms; slowest round ${slowestRound.toFixed(0)} ms; not 201: ${answers}`,
  );
}

const env = { SVC_BOOTSTRAP_ADMINTOKEN: token, SVC_LOGGING_LEVEL: "warn", SVC_RATELIMIT_API_PERSECOND: "1000000", SVC_RATELIMIT_API_BURST: "1000000" };
const pg = await testDatabases();
try {
  const embedded = await startServer({ statePath: `${tempDir()}/state.db`, env });
  await measure("embedded (SQLite), one server", [embedded]);
  await embedded.stop();

  const uri = await pg.create("activations");
  const external = { ...env, SVC_STORAGE_BACKEND: "external", SVC_DATABASE_URI: uri, SVC_SECRETS_KEY: randomBytes(32).toString("base64") };
  const first = await startServer({ statePath: `${tempDir()}/state.db`, env: external, readyTimeoutMs: 30_000 });
  const second = await startServer({ statePath: `${tempDir()}/state.db`, env: external, readyTimeoutMs: 30_000 });
  await measure("PostgreSQL, two replicas", [first, second]);
} finally {
  await killAll();
  removeTempDirs();
  await pg.dropAll();
}
