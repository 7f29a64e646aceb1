import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { SqliteStore } from "../store/sqlite.ts";
import { AuthFailureBursts, credentialKind } from "./failure-bursts.ts";

const dir = mkdtempSync(join(tmpdir(), "svc-bursts-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const logger = pino({ level: "silent" });
const T0 = Date.parse("2026-05-01T10:00:00.000Z");

async function bursts(store: SqliteStore) {
  return store.queryAudit({ action: "auth.failure_burst", limit: 100 });
}

test("a burst of 401s from one address and credential kind leaves one audit entry with its count", async () => {
  const store = new SqliteStore(join(dir, "one.db"));
  const counter = new AuthFailureBursts(store, logger, { windowMs: 60_000, threshold: 5 });
  for (let i = 0; i < 40; i++) counter.record("10.0.0.1", "serviceAccount", i % 2 ? "/api/v1/collectors" : "/api/v1/users", T0 + i * 1000);
  // Below the threshold: counted, never audited.
  for (let i = 0; i < 4; i++) counter.record("10.0.0.2", "none", "/api/v1/collectors", T0 + i);

  await counter.flush(T0 + 30_000);
  expect(await bursts(store)).toEqual([]); // the window is still open

  await counter.flush(T0 + 60_000);
  const entries = await bursts(store);
  expect(entries).toHaveLength(1);
  expect(entries[0]).toMatchObject({
    actor: "anonymous",
    remoteAddr: "10.0.0.1",
    resource: "credential",
    resourceId: "serviceAccount",
    outcome: "failure",
    details: { count: 40, since: "2026-05-01T10:00:00.000Z", until: "2026-05-01T10:01:00.000Z", paths: ["/api/v1/users", "/api/v1/collectors"] },
  });

  // The next window starts afresh.
  for (let i = 0; i < 6; i++) counter.record("10.0.0.1", "serviceAccount", "/api/v1/collectors", T0 + 70_000 + i);
  await counter.stop(); // audits what was counted so far
  const after = await bursts(store);
  expect(after).toHaveLength(2);
  expect(after.map((e) => e.details.count).sort()).toEqual([40, 6]);
  await store.close();
});

test("distinct addresses and credential kinds are separate bursts; past maxKeys they share one overflow burst", async () => {
  const store = new SqliteStore(join(dir, "many.db"));
  const counter = new AuthFailureBursts(store, logger, { windowMs: 1000, threshold: 2, maxKeys: 2 });
  for (const [addr, kind] of [
    ["a", "none"],
    ["a", "collector"],
    ["b", "none"],
    ["c", "none"],
  ] as const) {
    counter.record(addr, kind, "/x", T0);
    counter.record(addr, kind, "/x", T0);
  }
  await counter.flush(T0 + 1000);
  const entries = await bursts(store);
  const seen = entries.map((e) => `${e.remoteAddr}/${e.resourceId}/${e.details.count}`).sort();
  expect(seen).toEqual(["a/collector/2", "a/none/2", "null/many/4"]);
  await store.close();
});

test("the credential kind names what was presented, never the secret", () => {
  const req = (headers: Record<string, string>) => new Request("http://x/", { headers });
  expect(credentialKind(req({}))).toBe("none");
  expect(credentialKind(req({ authorization: "Bearer svcsa_abc" }))).toBe("serviceAccount");
  expect(credentialKind(req({ authorization: "Bearer svcct_abc" }))).toBe("collector");
  expect(credentialKind(req({ authorization: "Bearer what" }))).toBe("bearer");
  expect(credentialKind(req({ authorization: "Basic dTpw" }))).toBe("other");
  expect(credentialKind(req({ cookie: "a=b; svc_session=svcus_x" }))).toBe("session");
});
