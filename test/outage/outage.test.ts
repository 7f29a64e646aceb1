/**
 * The server through database outages, on a real PostgreSQL:
 * - in process, under many concurrent API writes, every connection of the
 *   database is ended again and again, then the database refuses connections
 *   for a while: nothing answered 2xx is lost, refused writes get 503
 *   storage_unavailable with Retry-After, health says storage is down, and
 *   afterwards the server is healthy and its change feed works again;
 * - the real server/main.ts started before its database exists listens, is
 *   alive but not ready, says storage is down (no password), and finishes
 *   starting once the database is created.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { PostgresStore } from "../../server/store/postgres.ts";
import type { Change } from "../../server/store/store.ts";
import { type TestDatabases, testDatabases } from "../../server/store/testdb.ts";
import { startTestServer } from "../harness.ts";
import { until } from "../opamp/helpers.ts";
import { api, bootstrapToken, killAll, removeTempDirs, startServer, tempDir } from "../process/spawn.ts";
import type { ErrorBody } from "../../server/http/schemas.ts";

let dbs: TestDatabases;

beforeAll(async () => {
  dbs = await testDatabases();
});

afterAll(async () => {
  await killAll();
  removeTempDirs();
  await dbs?.dropAll();
}, 30_000);

interface Health {
  status: string;
  storage: { backend: string; status: string; error?: string };
}

describe("database outages", () => {
  test("under concurrent API writes: connections cut repeatedly, then refused; nothing acknowledged is lost", async () => {
    const uri = await dbs.create("load");
    const database = new URL(uri).pathname.slice(1);
    const server = await startTestServer({}, () => PostgresStore.open(uri));
    const acknowledged: string[] = [];
    const refused: Response[] = [];
    const unexpected: string[] = [];
    let running = true;
    let n = 0;
    const worker = async () => {
      while (running) {
        const name = `load-${n++}`;
        const res = await server.api("/collectors", { method: "POST", json: { name } });
        if (res.status === 201) acknowledged.push(((await res.json()) as { id: string }).id);
        else if (res.status === 503) {
          const body = (await res.json()) as ErrorBody;
          if (body.error.code !== "storage_unavailable" || !(Number(res.headers.get("retry-after")) > 0)) {
            unexpected.push(`503 ${JSON.stringify(body)} retry-after=${res.headers.get("retry-after")}`);
          }
          refused.push(res);
          await Bun.sleep(20);
        } else unexpected.push(`${res.status} ${await res.text()}`);
      }
    };
    const terminateAll = () => dbs.admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${database} AND pid <> pg_backend_pid()`;
    const workers = Array.from({ length: 12 }, worker);
    try {
      // Cuts: every connection ended, ten times, while the writes run.
      for (let i = 0; i < 10; i++) {
        await until(async () => acknowledged.length > i * 20 + 20, 20_000);
        await terminateAll();
      }
      // An outage: the database refuses connections for a while.
      await dbs.admin.unsafe(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS false`);
      await terminateAll();
      await until(async () => refused.length > 0, 20_000);
      const health = await server.api("/system/health");
      expect(health.status).toBe(200);
      const down = (await health.json()) as Health;
      expect(down.status).toBe("degraded");
      expect(down.storage.status).toBe("down");
      expect(down.storage.error).toContain("PostgreSQL");
      expect((await fetch(`${server.base}/readyz`)).status).toBe(503);
      expect((await fetch(`${server.base}/healthz`)).status).toBe(200);
      await dbs.admin.unsafe(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS true`);
      const before = acknowledged.length;
      await until(async () => acknowledged.length > before + 20, 20_000);
    } finally {
      running = false;
      await Promise.all(workers);
      await dbs.admin.unsafe(`ALTER DATABASE "${database}" ALLOW_CONNECTIONS true`);
    }
    try {
      expect(unexpected).toEqual([]);
      expect(refused.length).toBeGreaterThan(0);
      // Healthy again.
      await until(async () => (await fetch(`${server.base}/readyz`)).status === 200, 20_000);
      const health = await server.call<Health>("/system/health");
      expect(health.status).toBe("ok");
      expect(health.storage.status).toBe("up");
      // Every acknowledged write is stored, once.
      const stored = new Set((await server.app.store.list("collectors")).map((d) => d.id));
      const missing = acknowledged.filter((id) => !stored.has(id));
      expect(missing).toEqual([]);
      expect(new Set(acknowledged).size).toBe(acknowledged.length);
      // The change feed works again: a watcher hears a new write.
      const heard: Change[] = [];
      const stop = server.app.store.watch((changes) => heard.push(...changes));
      try {
        await until(
          async () => {
            const made = await server.call<{ id: string }>("/collectors", "POST", { name: `after-${Date.now()}` });
            await Bun.sleep(100);
            return heard.some((c) => c.id === made.id);
          },
          20_000,
          0,
        );
      } finally {
        stop();
      }
    } finally {
      await server.stop();
    }
  }, 120_000);

  test("server/main.ts started before its database exists: alive, not ready, storage down; ready once the database is there", async () => {
    const name = `${dbs.run}_later`;
    const url = new URL(dbs.uriFor(name));
    url.username = "postgres";
    url.password = "not-a-real-s3cret"; // trust auth ignores it; it must never be shown
    const token = bootstrapToken();
    const dir = tempDir();
    const server = await startServer({
      waitReady: false,
      statePath: join(dir, "state.db"),
      env: {
        SVC_STORAGE_BACKEND: "external",
        SVC_DATABASE_URI: url.toString(),
        SVC_SECRETS_KEY: randomBytes(32).toString("base64"),
        SVC_BOOTSTRAP_ADMINTOKEN: token,
      },
    });
    await until(async () => (await fetch(`${server.base}/healthz`).catch(() => null))?.status === 200, 20_000, 50);
    expect((await fetch(`${server.base}/readyz`)).status).toBe(503);
    // It keeps trying, and says why.
    await until(async () => /unreachable; retrying/.test(server.stdout()), 20_000, 50);

    const health = await api(server.base, token, "/system/health");
    expect(health.status).toBe(200);
    const down = (await health.json()) as Health;
    expect(down.status).toBe("degraded");
    expect(down.storage.backend).toBe("postgres");
    expect(down.storage.status).toBe("down");
    expect(down.storage.error).toContain("does not exist");
    expect(JSON.stringify(down)).not.toContain("s3cret");

    const write = await api(server.base, token, "/collectors", { method: "POST", json: { name: "too-early" } });
    expect(write.status).toBe(503);
    expect(Number(write.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(((await write.json()) as ErrorBody).error.code).toBe("storage_unavailable");
    expect(server.stdout()).not.toContain("is serving at");

    await dbs.create("later");
    await until(async () => /is serving at/.test(server.stdout()), 60_000, 50);
    expect((await fetch(`${server.base}/readyz`)).status).toBe(200);
    const up = (await (await api(server.base, token, "/system/health")).json()) as Health;
    expect(up.storage).toEqual({ backend: "postgres", status: "up" });
    expect((await api(server.base, token, "/collectors", { method: "POST", json: { name: "in-time" } })).status).toBe(201);
    expect(server.stdout() + server.stderr()).not.toContain("s3cret");
    expect(await server.stop("SIGTERM")).toBe(0);
  }, 120_000);
});
