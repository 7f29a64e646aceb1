/**
 * Reconnect storm on the embedded store (CI size; bench/reconnect-storm.ts
 * runs the full fleet): 2,000 OpAMP agents connected, a publish, and at once
 * a kill -9 and a restart on the same state file and port. Every agent
 * reconnects with jittered exponential backoff, and would wait out a 503 or
 * 429 + Retry-After (opamp.maxConcurrentRequests, http.maxConnections); with
 * the jitter spreading the storm, the restarted server seldom has to refuse.
 * End state: every agent connected again and running the published config,
 * and GET /publish/status counts every collector `current`.
 */
import { afterAll, afterEach, expect, test } from "bun:test";
import { join } from "node:path";
import { api, bootstrapToken, killAll, removeTempDirs, startServer, tempDir, type ServerProcess } from "../process/spawn.ts";
import { seedCollectors, startClients, type StormClients, type StormProgress } from "./storm.ts";

const COLLECTORS = 2_000;
let clients: StormClients | null = null;

afterEach(async () => {
  await clients?.stop();
  await killAll();
});
afterAll(removeTempDirs);

test(`a reconnect storm of ${COLLECTORS} OpAMP agents after kill -9: every one back, none without the published config`, async () => {
  const dir = tempDir("svc-storm-");
  const statePath = join(dir, "state.db");
  const agents = await seedCollectors(statePath, COLLECTORS);
  const admin = bootstrapToken();
  const env = { SVC_BOOTSTRAP_ADMINTOKEN: admin, SVC_LOGGING_LEVEL: "error" };
  let server: ServerProcess = await startServer({ statePath, env });
  const port = server.port;
  const call = async <T = Record<string, unknown>>(path: string, method = "GET", json?: unknown): Promise<T> => {
    const res = await api(server.base, admin, path, { method, json });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path} → ${res.status}: ${text}`);
    return JSON.parse(text) as T;
  };
  const until = (what: string, ms: number, done: (p: StormProgress) => boolean) => clients!.until(what, ms, done, () => server.stderr());

  await call("/sources", "POST", { name: "storm logs", type: "filelog", config: { include: ["/var/log/storm/*.log"] } });
  await call("/commit", "POST", { message: "storm" });
  clients = startClients(`ws://127.0.0.1:${port}/v1/opamp`, agents, 2, dir);
  await until("every agent connected", 30_000, (p) => p.connected === COLLECTORS);

  // The publish is acknowledged; the server dies before its pushes are all out.
  const rollout = await call<{ commit: string }>("/publish", "POST");
  server.proc.kill("SIGKILL");
  await server.exited;
  server = await startServer({ statePath, env, port });
  const restarted = performance.now();

  const end = await until("every agent back and running one config", 45_000, (p) => p.connected === COLLECTORS && p.withConfig === COLLECTORS && Object.values(p.hashes).filter((n) => n > 0).length === 1);
  const backSeconds = (performance.now() - restarted) / 1000;
  const deadline = Date.now() + 15_000;
  let status = await call<{ commit: string; counts: Record<string, number> }>("/publish/status");
  while (status.counts.current !== COLLECTORS && Date.now() < deadline) {
    await Bun.sleep(200);
    status = await call("/publish/status");
  }
  expect({ commit: status.commit, current: status.counts.current }).toEqual({ commit: rollout.commit, current: COLLECTORS });
  expect(end.reconnects).toBeGreaterThanOrEqual(COLLECTORS);
  console.log(
    `reconnect storm: ${COLLECTORS} agents back with the published config ${backSeconds.toFixed(1)} s after the restart was ready; ` +
      `${end.refused503} upgrades refused 503, ${end.refused429} refused 429, ${end.failedOpens} opens failed while the server was down`,
  );
}, 120_000);
