import { expect, test } from "bun:test";
import pino from "pino";
import { SqliteStore } from "../store/sqlite.ts";
import { auditEntry, SYSTEM_ACTOR } from "./audit.ts";
import { pruneExpiredAudit, startAuditRetention } from "./retention.ts";

const at = (iso: string) => auditEntry(SYSTEM_ACTOR, "test", "thing", null, {}, "success", new Date(iso));

test("entries older than the retention are pruned, younger ones kept", async () => {
  const store = new SqliteStore(":memory:");
  await store.write([], [at("2026-01-01T00:00:00Z"), at("2026-03-01T00:00:00Z"), at("2026-03-30T00:00:00Z")]);
  const removed = await pruneExpiredAudit(store, 30, new Date("2026-04-01T00:00:00Z"));
  expect(removed).toBe(2);
  expect((await store.queryAudit({ limit: 10 })).map((e) => e.time)).toEqual(["2026-03-30T00:00:00.000Z"]);
  await store.close();
});

test("the periodic job runs at start and on every tick with the injected clock", async () => {
  const store = new SqliteStore(":memory:");
  await store.write([], [at("2026-01-01T00:00:00Z"), at("2026-06-01T00:00:00Z")]);
  let now = new Date("2026-01-15T00:00:00Z");
  const stop = startAuditRetention(store, { retentionDays: 365, logger: pino({ level: "silent" }), now: () => now, intervalMs: 20 });
  await Bun.sleep(50);
  expect(await store.queryAudit({ limit: 10 })).toHaveLength(2);
  now = new Date("2027-01-10T00:00:00Z");
  await Bun.sleep(80);
  expect((await store.queryAudit({ limit: 10 })).map((e) => e.time)).toEqual(["2026-06-01T00:00:00.000Z"]);
  stop();
  await store.close();
});
