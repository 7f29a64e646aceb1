/**
 * Reconnect storm on the embedded store (CI size; bench/reconnect-storm.ts
 * runs the full fleet), with real opamp-go clients: 2,000 over WebSocket, or
 * 1,000 polling over HTTP every 5 s (spread over the 5 s), connected; a publish, and at once a
 * kill -9 and a restart on the same state file and port. Every agent comes
 * back as opamp-go does (test/faults/storm.ts), and would wait out a 503 or
 * 429 + Retry-After (opamp.maxConcurrentRequests, http.maxConnections).
 * End state: every agent connected to the restarted server and running the
 * published config, and GET /publish/status counts every collector `current`.
 */
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { api, bootstrapToken, killAll, removeTempDirs, startServer, tempDir, type ServerProcess } from "../process/spawn.ts";
import { seedCollectors, startClients, type StormClients, type StormProgress } from "./storm.ts";

let clients: StormClients | null = null;

afterEach(async () => {
  await clients?.stop();
  clients = null;
  await killAll();
});
afterAll(removeTempDirs);

const FLEETS = [
  { transport: "ws", collectors: 2_000, heartbeatSeconds: undefined },
  { transport: "http", collectors: 1_000, heartbeatSeconds: 5 },
] as const;

describe.each(FLEETS)("over $transport", ({ transport, collectors, heartbeatSeconds }) => {
  test(`a reconnect storm of ${collectors} opamp-go agents after kill -9: every one back, none without the published config`, async () => {
    const dir = tempDir("svc-storm-");
    const statePath = join(dir, "state.db");
    const agents = await seedCollectors(statePath, collectors);
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
    // HTTP agents start spread over their polling interval, so the kill finds some of them mid-request.
    clients = await startClients(`${transport}://127.0.0.1:${port}/v1/opamp`, agents, { processes: 2, heartbeatSeconds, spreadSeconds: heartbeatSeconds });
    await until("every agent connected", 60_000, (p) => p.connected === collectors);
    if (transport === "http") {
      // Polling steadily, each on its own phase: the kill finds some mid-request.
      clients.epoch();
      await until("every agent polled again", 60_000, (p) => p.connected === collectors);
    }

    // The publish is acknowledged; the server dies before its pushes are all out.
    const rollout = await call<{ commit: string }>("/publish", "POST");
    server.proc.kill("SIGKILL");
    await server.exited;
    clients.epoch();
    server = await startServer({ statePath, env, port });
    const restarted = performance.now();

    const end = await until(
      "every agent back and running one config",
      60_000,
      (p) => p.connected === collectors && p.withConfig === collectors && Object.values(p.hashes).filter((n) => n > 0).length === 1,
    );
    const backSeconds = (performance.now() - restarted) / 1000;
    const deadline = Date.now() + 15_000;
    let status = await call<{ commit: string; counts: Record<string, number> }>("/publish/status");
    while (status.counts.current !== collectors && Date.now() < deadline) {
      await Bun.sleep(200);
      status = await call("/publish/status");
    }
    expect({ commit: status.commit, current: status.counts.current }).toEqual({ commit: rollout.commit, current: collectors });
    console.log(
      `reconnect storm over ${transport}: ${collectors} opamp-go agents back with the published config ${backSeconds.toFixed(1)} s after the restart was ready; ` +
        `${end.refused503} refused 503, ${end.refused429} refused 429, ${end.failedConnects} OnConnectFailed calls otherwise (server down)`,
    );
  }, 180_000);
});
