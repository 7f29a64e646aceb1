/**
 * The lease contract on the embedded store and on a real PostgreSQL (two
 * connections to one database, as two replicas would have).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLOCK_SKEW_MARGIN_MS, type LeaseRecord, leaseFor, LEASES, StoreLease } from "./lease.ts";
import { PostgresStore } from "./postgres.ts";
import { SqliteStore } from "./sqlite.ts";
import type { Store } from "./store.ts";
import { type TestDatabases, testDatabases } from "./testdb.ts";

const TTL = 10_000;

/** Two replicas' views of one store; `now` is the clock both read. */
interface Replicas {
  a: Store;
  b: Store;
  close(): Promise<void>;
}

function leaseContract(backend: string, open: () => Promise<Replicas>): void {
  describe(`lease on ${backend}`, () => {
    let now = Date.parse("2026-01-01T00:00:00Z");
    const clock = () => now;
    let n = 0;
    /** A fresh lease name per test, and a lease object on each replica. */
    async function pair(r: Replicas) {
      const name = `job-${n++}`;
      return {
        a: new StoreLease(r.a, name, { ttlMs: TTL, now: clock }),
        b: new StoreLease(r.b, name, { ttlMs: TTL, now: clock }),
        stored: async () => (await r.a.get<LeaseRecord>(LEASES, name))?.data ?? null,
      };
    }

    test("contenders racing for a free lease: exactly one wins, and it keeps it by acquiring again", async () => {
      const r = await open();
      try {
        for (let round = 0; round < 5; round++) {
          const { a, b, stored } = await pair(r);
          const c = new StoreLease(r.b, a.name, { ttlMs: TTL, now: clock });
          const won = await Promise.all([a.acquire(), b.acquire(), c.acquire()]);
          expect(won.filter(Boolean)).toHaveLength(1);
          const winner = [a, b, c][won.indexOf(true)]!;
          expect((await stored())!.holder).toBe(winner.holder);
          expect(await winner.acquire()).toBe(true);
          for (const loser of [a, b, c].filter((l) => l !== winner)) expect(await loser.acquire()).toBe(false);
        }
      } finally {
        await r.close();
      }
    });

    test("a lease whose holder stopped renewing is taken over once expired (past TTL and the skew margin)", async () => {
      const r = await open();
      try {
        const { a, b, stored } = await pair(r);
        expect(await a.acquire()).toBe(true);
        now += TTL + CLOCK_SKEW_MARGIN_MS;
        expect(await b.acquire()).toBe(false);
        now += 1;
        expect(await b.acquire()).toBe(true);
        expect(await stored()).toEqual({ holder: b.holder, renewedAt: new Date(now).toISOString(), ttlMs: TTL });
        // The late holder learns it lost the lease and cannot take it back.
        expect(await a.renew()).toBe(false);
        expect(await a.acquire()).toBe(false);
      } finally {
        await r.close();
      }
    });

    test("renewing moves the expiry on; a non-holder cannot renew", async () => {
      const r = await open();
      try {
        const { a, b, stored } = await pair(r);
        expect(await b.renew()).toBe(false); // nobody holds it
        expect(await stored()).toBeNull();
        expect(await a.acquire()).toBe(true);
        expect(await b.renew()).toBe(false);
        expect((await stored())!.holder).toBe(a.holder);
        now += TTL;
        expect(await a.renew()).toBe(true);
        now += TTL; // past the first expiry, not the renewed one
        expect(await b.acquire()).toBe(false);
        expect((await stored())!.holder).toBe(a.holder);
      } finally {
        await r.close();
      }
    });

    test("a released lease is free at once; releasing one held by another does nothing", async () => {
      const r = await open();
      try {
        const { a, b, stored } = await pair(r);
        expect(await a.acquire()).toBe(true);
        await b.release();
        expect((await stored())!.holder).toBe(a.holder);
        await a.release();
        expect(await stored()).toBeNull();
        expect(await b.acquire()).toBe(true);
        expect(await a.acquire()).toBe(false);
      } finally {
        await r.close();
      }
    });
  });
}

const dir = mkdtempSync(join(tmpdir(), "svc-lease-"));
let files = 0;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

leaseContract("sqlite", async () => {
  const path = join(dir, `${files++}.db`);
  const a = new SqliteStore(path);
  const b = new SqliteStore(path);
  return { a, b, close: async () => void (await Promise.all([a.close(), b.close()])) };
});

let pg: TestDatabases;
let uri: string;
beforeAll(async () => {
  pg = await testDatabases();
  uri = await pg.create("lease");
});
afterAll(async () => pg?.dropAll());

leaseContract("postgres", async () => {
  const [a, b] = await Promise.all([PostgresStore.open(uri), PostgresStore.open(uri)]);
  return { a, b, close: async () => void (await Promise.all([a.close(), b.close()])) };
});

test("on the embedded store, which serves one instance, the lease is trivially held and nothing is stored", async () => {
  const store = new SqliteStore(":memory:");
  const lease = leaseFor(store, "retention", { ttlMs: TTL, holder: "one" });
  const other = leaseFor(store, "retention", { ttlMs: TTL, holder: "two" });
  expect([await lease.acquire(), await other.acquire(), await other.renew()]).toEqual([true, true, true]);
  await lease.release();
  expect(await store.count(LEASES)).toBe(0);
  await store.close();
});
