/**
 * Issue 11 faults: a reconnect storm of the full fleet after a server
 * restart (test/faults/reconnect-storm.test.ts runs 2,000 in CI).
 *
 * Seeds N OpAMP collectors into an embedded state file, starts the real
 * server, connects N real opamp-go clients from a few opampclient processes
 * (test/faults/storm.ts: opamp-go's own backoff and Retry-After handling),
 * publishes, kills the server with SIGKILL at once and starts it again on the
 * same state file and port. The clock runs from the restarted server being
 * ready until every agent is connected again and runs the published config,
 * and until GET /publish/status counts every collector `current`.
 *
 * Usage: bun bench/reconnect-storm.ts [collectors=5000] [clientProcesses=4] [ws|http] [pollSeconds]
 */
import { join } from "node:path";
import { seedCollectors, startClients, type StormClients, type StormProgress } from "../test/faults/storm.ts";
import { api, bootstrapToken, killAll, removeTempDirs, startServer, tempDir, type ServerProcess } from "../test/process/spawn.ts";

const [count = 5000, processes = 4] = process.argv.slice(2, 4).map(Number);
const transport = process.argv[4] === "http" ? "http" : "ws";
const heartbeatSeconds = process.argv[5] ? Number(process.argv[5]) : undefined;
const dir = tempDir("svc-bench-storm-");
const statePath = join(dir, "state.db");
const admin = bootstrapToken();
const env = { SVC_BOOTSTRAP_ADMINTOKEN: admin, SVC_LOGGING_LEVEL: "error" };
let clients: StormClients | null = null;

try {
  const agents = await seedCollectors(statePath, count);
  let server: ServerProcess = await startServer({ statePath, env, readyTimeoutMs: 60_000 });
  const port = server.port;
  const call = async <T = Record<string, unknown>>(path: string, method = "GET", json?: unknown): Promise<T> => {
    const res = await api(server.base, admin, path, { method, json });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status}: ${text}`);
    return JSON.parse(text) as T;
  };
  const until = (what: string, ms: number, done: (p: StormProgress) => boolean) => clients!.until(what, ms, done);

  await call("/sources", "POST", { name: "storm logs", type: "filelog", config: { include: ["/var/log/storm/*.log"] } });
  await call("/commit", "POST", { message: "storm" });
  const connectStarted = performance.now();
  // HTTP agents start spread over their polling interval, and poll steadily before the kill.
  clients = await startClients(`${transport}://127.0.0.1:${port}/v1/opamp`, agents, { processes, heartbeatSeconds, spreadSeconds: heartbeatSeconds });
  await until("every agent connected", 300_000, (p) => p.connected === count);
  if (transport === "http") {
    clients.epoch();
    await until("every agent polled again", 300_000, (p) => p.connected === count);
  }
  console.log(`collectors: ${count} opamp-go agents over ${transport}, client processes: ${processes}, embedded store`);
  console.log(`first connect: ${count} agents in ${((performance.now() - connectStarted) / 1000).toFixed(1)} s`);

  const rollout = await call<{ commit: string }>("/publish", "POST");
  const killedAt = performance.now();
  server.proc.kill("SIGKILL");
  await server.exited;
  clients.epoch();
  server = await startServer({ statePath, env, port, readyTimeoutMs: 60_000 });
  const ready = performance.now();
  console.log(`publish acknowledged, then kill -9; the restarted server was ready ${((ready - killedAt) / 1000).toFixed(1)} s after the kill`);

  const single = (p: StormProgress) => Object.values(p.hashes).filter((n) => n > 0).length === 1;
  const end = await until("every agent back with the published config", 300_000, (p) => p.connected === count && p.withConfig === count && single(p));
  console.log(`every agent connected again and running the published config ${((performance.now() - ready) / 1000).toFixed(1)} s after the restart was ready`);
  for (;;) {
    const status = await call<{ commit: string; counts: Record<string, number> }>("/publish/status");
    if (status.commit === rollout.commit && status.counts.current === count) {
      console.log(`GET /publish/status: ${status.counts.current} current, ${((performance.now() - ready) / 1000).toFixed(1)} s after the restart was ready`);
      break;
    }
    if (performance.now() - ready > 300_000) throw new Error(`status still ${JSON.stringify(status)} after 300 s`);
    await Bun.sleep(100);
  }
  console.log(
    `refused with Retry-After: ${end.refused503} × 503, ${end.refused429} × 429; ${end.failedConnects} OnConnectFailed calls otherwise (the server down)`,
  );
  await server.stop("SIGTERM");
} finally {
  await clients?.stop();
  await killAll();
  removeTempDirs();
}
