/**
 * Two servers on one embedded store lose each other's commits, so the second
 * one must not start: it exits 1 naming the process that holds the store, and
 * the first keeps serving with its history intact. A server killed with -9
 * leaves no stale lock behind.
 */
import { afterAll, afterEach, expect, test } from "bun:test";
import { join } from "node:path";
import { api, bootstrapToken, freePort, isListening, killAll, removeTempDirs, startServer, tempDir } from "./spawn.ts";

afterEach(killAll);
afterAll(async () => {
  await killAll();
  removeTempDirs();
});

test("a second server on the same storage.boltPath exits 1 naming the first; after kill -9 of the first, it starts", async () => {
  const statePath = join(tempDir(), "state.db");
  const token = bootstrapToken();
  const env = { SVC_BOOTSTRAP_ADMINTOKEN: token, SVC_LOGGING_LEVEL: "warn" };
  const first = await startServer({ statePath, env });
  const created = await api(first.base, token, "/sources", {
    method: "POST",
    json: { name: "kept", type: "filelog", config: { include: ["/var/log/kept.log"] } },
  });
  expect(created.status).toBe(201);
  const commit = await api(first.base, token, "/commit", { method: "POST", json: { message: "first server's commit" } });
  expect(commit.status).toBe(201);

  const port = freePort();
  const second = await startServer({ statePath, env, port, waitReady: false });
  const code = await Promise.race([second.exited, Bun.sleep(15_000).then(() => "still running" as const)]);
  expect(code).toBe(1);
  expect(second.stderr()).toContain(`${statePath} (storage.boltPath) is in use by another svc server (pid ${first.proc.pid} `);
  expect(await isListening(port)).toBe(false);

  const history = await api(first.base, token, "/commits");
  expect(history.status).toBe(200);
  expect(((await history.json()) as { items: { message: string }[] }).items.map((c) => c.message)).toEqual(["first server's commit"]);

  await first.stop("SIGKILL");
  const third = await startServer({ statePath, env });
  const after = await api(third.base, token, "/commits");
  expect(((await after.json()) as { items: { message: string }[] }).items.map((c) => c.message)).toEqual(["first server's commit"]);
});
