import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import pino from "pino";
import { PostgresStore } from "../store/postgres.ts";
import { SqliteStore } from "../store/sqlite.ts";
import { type TestDatabases, testDatabases } from "../store/testdb.ts";
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
  await stop();
  await store.close();
});

describe("replicas on one PostgreSQL database", () => {
  let pg: TestDatabases;
  beforeAll(async () => {
    pg = await testDatabases();
  });
  afterAll(async () => pg?.dropAll());

  test("two starters: one prunes on every tick; when it stops, the other takes over", async () => {
    const uri = await pg.create("retention");
    const stores = await Promise.all([PostgresStore.open(uri), PostgresStore.open(uri)]);
    const now = new Date("2026-06-01T00:00:00Z"); // a still clock: the lease never expires by itself
    const runs = [0, 0];
    const start = (i: number) =>
      startAuditRetention(stores[i]!, {
        retentionDays: 30,
        logger: pino({ level: "silent" }),
        now: () => now,
        intervalMs: 20,
        jobs: [{ name: "probe", run: async () => (runs[i]!++, 0) }],
      });
    const stops = [start(0), start(1)];
    try {
      await until("five ticks", () => runs[0]! + runs[1]! >= 5);
      const holder = runs[0]! > 0 ? 0 : 1;
      const other = 1 - holder;
      expect(runs[other]).toBe(0);
      await stops[holder]!();
      const after = runs[holder]!;
      await until("the other replica to take over", () => runs[other]! >= 3);
      expect(runs[holder]).toBe(after);
    } finally {
      for (const stop of stops) await stop();
      await Promise.all(stores.map((s) => s.close()));
    }
  });
});

async function until(what: string, ok: () => boolean): Promise<void> {
  const end = Date.now() + 10_000;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
}
