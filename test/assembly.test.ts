/**
 * The test server is the server main.ts runs (both come from server/app.ts):
 * its background services run, and stopping it stops everything once.
 */
import { afterEach, expect, test } from "bun:test";
import { auditEntry, SYSTEM_ACTOR } from "../server/audit/audit.ts";
import { SqliteStore } from "../server/store/sqlite.ts";
import { startTestServer, type TestServer } from "./harness.ts";

let server: TestServer | undefined;
afterEach(async () => {
  await server?.stop();
  server = undefined;
});

test("audit retention runs in the test server as in production: an entry past storage.auditLogRetentionDays is pruned at start", async () => {
  server = await startTestServer({}, async (config) => {
    const store = new SqliteStore(config.storage.boltPath);
    await store.write([], [auditEntry(SYSTEM_ACTOR, "test.ancient", "test", null, {}, "success", new Date("2001-01-01T00:00:00Z"))]);
    return store;
  });
  const actions = async () => (await server!.app.store.queryAudit({ limit: 100 })).map((e) => e.action);
  for (let i = 0; i < 50 && (await actions()).includes("test.ancient"); i++) await Bun.sleep(20);
  expect(await actions()).not.toContain("test.ancient");
});

test("stopping ends open event streams before draining, and a second stop is the same stop", async () => {
  server = await startTestServer();
  const stream = await fetch(`${server.base}/api/v1/events`, { headers: { Authorization: `Bearer ${server.adminToken}` } });
  expect(stream.status).toBe(200);
  const body = stream.text();
  const edge = server.http.stop();
  expect(server.http.stop()).toBe(edge);
  await edge;
  // The hub ended the stream, so the answer completed and the drain did not wait on it.
  expect(await body).toBe(": connected\n\n");
  const all = server.app.stop();
  expect(server.app.stop()).toBe(all);
  await all;
});
