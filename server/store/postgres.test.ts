/**
 * The Store contract and the adapter's own behaviour against a real
 * PostgreSQL, in databases of this run's own (see testdb.ts).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { storeContract } from "./contract.ts";
import { CHANGES_CHANNEL, notifyParts, PostgresStore } from "./postgres.ts";
import type { Change } from "./store.ts";
import { holdDocsLock, type TestDatabases, testDatabases } from "./testdb.ts";

let pg: TestDatabases;
/** The run's main database (name and URI), shared by the contract suite (emptied before each test's store). */
let MAIN: string;
let mainUri: string;
let mainAdmin: SQL;

beforeAll(async () => {
  pg = await testDatabases();
  MAIN = `${pg.run}_main`;
  mainUri = await pg.create("main");
  mainAdmin = new SQL(mainUri, { max: 1, connection: { application_name: "svc-test-admin" } });
});

afterAll(async () => {
  await mainAdmin?.close({ timeout: 0 });
  await pg?.dropAll();
});

storeContract("postgres", {
  open: async () => {
    const store = await PostgresStore.open(mainUri);
    await mainAdmin`TRUNCATE docs, audit`;
    return store;
  },
  reopen: async () => PostgresStore.open(mainUri),
  second: async () => PostgresStore.open(mainUri),
});

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(20);
  }
}

describe("PostgreSQL store", () => {
  test("two instances starting at the same moment migrate once; a newer schema is refused", async () => {
    const uri = await pg.create("migrate");
    const stores = await Promise.all([PostgresStore.open(uri), PostgresStore.open(uri), PostgresStore.open(uri)]);
    const db = new SQL(uri, { max: 1 });
    try {
      const rows = await db`SELECT version FROM schema_migrations ORDER BY version`;
      expect(rows.map((r: { version: number }) => r.version)).toEqual([1]);
      await stores[0]!.write([{ op: "put", collection: "t", id: "a", data: 1 }]);
      expect((await stores[2]!.get("t", "a"))!.data).toBe(1);
      await db`INSERT INTO schema_migrations (version) VALUES (999)`;
      await expect(PostgresStore.open(uri)).rejects.toThrow(/schema version 999, newer than this server knows/);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
      await db.close();
    }
  });

  test("announcements are split under the 8000-byte NOTIFY limit and arrive whole", async () => {
    const changes: Change[] = Array.from({ length: 500 }, (_, i) => ({
      collection: "collectors",
      id: `collector-${String(i).padStart(4, "0")}-${"x".repeat(24)}`,
      version: i + 1,
      op: "put",
    }));
    const parts = notifyParts("w:1", changes);
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) expect(Buffer.byteLength(part)).toBeLessThan(8000);
    expect(parts.flatMap((p) => (JSON.parse(p) as { c: unknown[] }).c)).toHaveLength(500);
    // A change that fits no payload makes receivers resync instead.
    expect(JSON.parse(notifyParts("w:2", [{ collection: "t", id: "é".repeat(5000), version: 1, op: "put" }])[0]!)).toMatchObject({
      c: [],
      o: 1,
    });

    const a = await PostgresStore.open(mainUri);
    const b = await PostgresStore.open(mainUri);
    const payloads: string[] = [];
    const raw = new SQL(mainUri, { max: 1 });
    const subscription = await raw.listen(CHANGES_CHANNEL, (payload) => payloads.push(payload));
    const seen: Change[][] = [];
    b.watch((batch) => seen.push(batch));
    try {
      const written = await a.write(changes.map((c) => ({ op: "put" as const, collection: "bulk", id: c.id, data: { big: true } })));
      expect(written).toHaveLength(500);
      await until("b to hear the batch", () => seen.length > 0);
      await until("the raw listener", () => payloads.length >= 2);
      expect(seen).toHaveLength(1);
      expect(seen[0]!.map((c) => c.id)).toEqual(changes.map((c) => c.id));
      for (const p of payloads) expect(Buffer.byteLength(p)).toBeLessThan(8000);
    } finally {
      await subscription.unlisten();
      await raw.close();
      await a.close();
      await b.close();
    }
  });

  test("after pg_terminate_backend of its connections the store serves again, resyncs its watchers and lost nothing", async () => {
    const a = await PostgresStore.open(mainUri);
    const b = await PostgresStore.open(mainUri);
    const seen: Change[] = [];
    let resyncs = 0;
    a.watch(
      (changes) => seen.push(...changes),
      () => resyncs++,
    );
    try {
      const acknowledged = [];
      for (let i = 0; i < 20; i++) acknowledged.push(...(await a.write([{ op: "put", collection: "kill", id: `k${i}`, data: i }])));
      await a.ping();
      const killed = await pg.admin`SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
        WHERE datname = ${MAIN} AND pid <> pg_backend_pid() AND application_name <> 'svc-test-admin'`;
      expect(killed.length).toBeGreaterThan(0);
      // Serves again: reads and writes (a query on a connection the server just ended is retried).
      await until("a to serve", async () =>
        a.ping().then(
          () => true,
          () => false,
        ),
      );
      expect(await a.count("kill")).toBe(20);
      for (const doc of acknowledged) expect((await a.get("kill", doc.id))!.version).toBe(doc.version);
      await until("the feed to reconnect and resync", () => resyncs > 0);
      seen.length = 0;
      await b.write([{ op: "put", collection: "kill", id: "after", data: true }]);
      await until("a to hear b's write after reconnecting", () => seen.some((c) => c.id === "after"));
      const [again] = await a.write([{ op: "put", collection: "kill", id: "k0", data: "again", expect: 1 }]);
      expect(again!.version).toBe(2);
    } finally {
      await a.close();
      await b.close();
    }
  }, 30_000);

  test("a batch of 10,000 documents commits under the batch lock; small guarded writes racing it keep compare-and-swap", async () => {
    const uri = await pg.create("big");
    const [one, two] = await Promise.all([PostgresStore.open(uri), PostgresStore.open(uri)]);
    try {
      const ids = Array.from({ length: 10_000 }, (_, i) => `c${String(i).padStart(5, "0")}`);
      await one.write(ids.map((id) => ({ op: "put", collection: "collector_config", id, data: { seq: 1 } })));
      // The fleet-wide batch and per-document writers guarded on version 1 race over the same documents.
      const big = one.write(ids.map((id) => ({ op: "put", collection: "collector_config", id, data: { seq: 2 } })));
      const small = Promise.allSettled(
        ids.slice(0, 20).map((id) => two.write([{ op: "put", collection: "collector_config", id, data: { seq: "small" }, expect: 1 }])),
      );
      await big;
      const outcomes = await small;
      for (const [i, outcome] of outcomes.entries()) {
        const doc = (await one.get<{ seq: unknown }>("collector_config", ids[i]!))!;
        // Whichever ran second saw version 2 or 3, never a lost update.
        if (outcome.status === "fulfilled") expect(doc).toMatchObject({ version: 3, data: { seq: 2 } });
        else expect(doc).toMatchObject({ version: 2, data: { seq: 2 } });
      }
      expect(await one.count("collector_config")).toBe(10_000);
    } finally {
      await Promise.all([one.close(), two.close()]);
    }
  }, 60_000);

  test("ping fails within its deadline while a table lock stalls writes, and answers again once the lock is released", async () => {
    const store = await PostgresStore.open(mainUri);
    let lock: { release(): Promise<void> } | undefined;
    try {
      await store.ping();
      lock = await holdDocsLock(mainUri);
      // Reads go on; a write waits for the lock, and ping says the store does not take writes.
      expect(await store.count("stall")).toBe(0);
      const stalled = store.write([{ op: "put", collection: "stall", id: "a", data: 1 }]);
      await expect(store.ping()).rejects.toMatchObject({ status: 503, message: expect.stringContaining("not taking writes") });
      await lock.release();
      await stalled;
      await until("ping to answer again", async () =>
        store.ping().then(
          () => true,
          () => false,
        ),
      );
      expect((await store.get("stall", "a"))!.data).toBe(1);
    } finally {
      await lock?.release();
      await store.close();
    }
  }, 30_000);

  test("ping fails while the database is unreachable, and opening an unreachable one fails", async () => {
    const uri = await pg.create("down");
    const store = await PostgresStore.open(uri, { connectionTimeout: 2 });
    try {
      await store.ping();
      // Nobody can connect any more, and the store's sessions are ended.
      await pg.admin.unsafe(`ALTER DATABASE "${pg.run}_down" ALLOW_CONNECTIONS false`);
      await pg.admin`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${`${pg.run}_down`}`;
      await expect(store.ping()).rejects.toThrow();
      await pg.admin.unsafe(`ALTER DATABASE "${pg.run}_down" ALLOW_CONNECTIONS true`);
      await until("ping to answer again", async () =>
        store.ping().then(
          () => true,
          () => false,
        ),
      );
    } finally {
      await store.close();
    }
    const url = new URL(uri);
    url.port = "1"; // nothing listens there
    await expect(PostgresStore.open(url.toString(), { connectionTimeout: 2 })).rejects.toThrow();
  }, 30_000);
});
