import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { SYSTEM_ACTOR } from "../audit/audit.ts";
import { PostgresStore } from "../store/postgres.ts";
import { SqliteStore } from "../store/sqlite.ts";
import type { Store } from "../store/store.ts";
import { type TestDatabases, testDatabases } from "../store/testdb.ts";
import { Collectors } from "./collectors.ts";
import { Presence } from "./presence.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

async function setup() {
  const dir = mkdtempSync(join(tmpdir(), "svc-presence-"));
  const store = new SqliteStore(join(dir, "state.db"));
  const collectors = new Collectors(store);
  let now = Date.parse("2026-01-01T00:00:00Z");
  const presence = new Presence(store, collectors, pino({ level: "silent" }), () => now);
  cleanups.push(async () => {
    await presence.stop();
    collectors.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const collector = await collectors.create(SYSTEM_ACTOR, { name: "edge-1" });
  const stored = async () => (await store.get<{ status: string; lastSeen: string | null; health: unknown }>("collectors", collector.id))!.data;
  return { store, collectors, presence, collector, stored, advance: (ms: number) => (now += ms) };
}

test("first contact makes a pending collector online; bad health degrades it; recovery restores it", async () => {
  const { presence, collector, stored } = await setup();
  expect((await stored()).status).toBe("pending");
  await presence.seen(collector.id, { channel: "opamp", intervalSeconds: 30, healthy: true });
  expect(await stored()).toMatchObject({
    status: "online",
    lastSeen: "2026-01-01T00:00:00.000Z",
    health: { channel: "opamp", intervalSeconds: 30, healthy: true, error: null },
  });
  await presence.seen(collector.id, { channel: "opamp", intervalSeconds: 30, healthy: false, error: "exporter failing" });
  expect(await stored()).toMatchObject({ status: "degraded", health: { healthy: false, error: "exporter failing" } });
  await presence.seen(collector.id, { channel: "opamp", intervalSeconds: 30, healthy: true, error: null });
  expect((await stored()).status).toBe("online");
});

test("heartbeats write lastSeen at most every 15 s; silence for three intervals is offline", async () => {
  const { presence, collector, stored, advance, store } = await setup();
  await presence.seen(collector.id, { channel: "remotecfg", intervalSeconds: 10 });
  const versionAfterFirst = (await store.get("collectors", collector.id))!.version;
  advance(5_000);
  await presence.seen(collector.id, { channel: "remotecfg", intervalSeconds: 10 });
  expect((await store.get("collectors", collector.id))!.version).toBe(versionAfterFirst);
  advance(11_000);
  await presence.seen(collector.id, { channel: "remotecfg", intervalSeconds: 10 });
  expect((await stored()).lastSeen).toBe("2026-01-01T00:00:16.000Z");
  advance(29_000);
  expect(await presence.sweep()).toBe(0);
  advance(2_000);
  expect(await presence.sweep()).toBe(1);
  expect((await stored()).status).toBe("offline");
  await presence.seen(collector.id, { channel: "remotecfg", intervalSeconds: 10 });
  expect((await stored()).status).toBe("online");
});

test("a contact never clobbers a concurrent API edit, and an unknown collector is ignored", async () => {
  const { presence, collectors, collector, stored } = await setup();
  const contact = presence.seen(collector.id, { channel: "opamp", intervalSeconds: 30 });
  await collectors.update(SYSTEM_ACTOR, collector.id, { name: "renamed" });
  await contact;
  expect(await stored()).toMatchObject({ status: "online", name: "renamed" });
  await presence.seen("no-such-collector", { channel: "opamp", intervalSeconds: 30 });
});

test("goodbye is offline at once; a pending collector stays pending", async () => {
  const { presence, collector, stored, collectors } = await setup();
  await presence.seen(collector.id, { channel: "opamp", intervalSeconds: 30 });
  await presence.gone(collector.id);
  expect((await stored()).status).toBe("offline");
  const other = await collectors.create(SYSTEM_ACTOR, { name: "never-seen" });
  await presence.gone(other.id);
  expect((await collectors.get(other.id)).status).toBe("pending");
});

describe("two replicas on one PostgreSQL database", () => {
  let pg: TestDatabases;
  let uri: string;
  beforeAll(async () => {
    pg = await testDatabases();
    uri = await pg.create("presence");
  });
  afterAll(async () => pg?.dropAll());

  /** Replicas A and B: each its own store connection, collectors view and presence, on one clock. */
  async function cluster() {
    let now = Date.parse("2026-01-01T00:00:00Z");
    const replica = async () => {
      const store = await PostgresStore.open(uri);
      const collectors = new Collectors(store);
      const presence = new Presence(store, collectors, pino({ level: "silent" }), () => now);
      return { store, collectors, presence };
    };
    const a = await replica();
    const b = await replica();
    cleanups.push(async () => {
      for (const r of [a, b]) {
        await r.presence.stop();
        r.collectors.close();
        await r.store.close();
      }
    });
    const collector = await a.collectors.create(SYSTEM_ACTOR, { name: `edge-${Math.random().toString(36).slice(2)}` });
    const doc = () => a.store.get<{ status: string; lastSeen: string | null }>("collectors", collector.id).then((d) => d!);
    return { a, b, collector, doc, advance: (ms: number) => (now += ms) };
  }

  /** Until a replica's collectors view shows what the store holds (the change feed is asynchronous). */
  async function caughtUp(collectors: Collectors, store: Store, id: string): Promise<void> {
    const end = Date.now() + 10_000;
    for (;;) {
      const stored = (await store.get<{ lastSeen: string | null; status: string }>("collectors", id))!.data;
      const seen = await collectors.get(id);
      if (seen.lastSeen === stored.lastSeen && seen.status === stored.status) return;
      if (Date.now() > end) throw new Error("the collectors view did not catch up with the store");
      await Bun.sleep(10);
    }
  }

  test("a collector that keeps contacting replica B is never marked offline by A's sweep; silence is, once", async () => {
    const { a, b, collector, doc, advance } = await cluster();
    const contact = { channel: "opamp", intervalSeconds: 1 } as const;
    // Connected to A first, then to B: A's own last contact is soon older than the collector's latest.
    await b.presence.seen(collector.id, contact);
    advance(1_000);
    await a.presence.seen(collector.id, contact);
    expect(await a.presence.tick()).toBe(0); // A sweeps from now on
    for (let second = 2; second <= 40; second++) {
      advance(1_000);
      await b.presence.seen(collector.id, contact);
      await caughtUp(a.collectors, a.store, collector.id);
      expect(await a.presence.tick()).toBe(0);
      expect(await b.presence.tick()).toBeNull();
      expect((await doc()).data.status).toBe("online");
    }
    // Silence: B's last contact is stored (every 15 s at most), so A judges it within the window plus that lag.
    const before = (await doc()).version;
    let swept = 0;
    for (let second = 1; second <= 25; second++) {
      advance(1_000);
      const [byA, byB] = await Promise.all([a.presence.tick(), b.presence.tick()]);
      expect(byB).toBeNull();
      swept += byA!;
      await caughtUp(a.collectors, a.store, collector.id);
    }
    expect(swept).toBe(1);
    expect(await doc()).toMatchObject({ version: before + 1, data: { status: "offline" } });
  });

  test("racing replicas: one sweeps each tick; the other takes over once the sweeper stops", async () => {
    const { a, b, collector, doc, advance } = await cluster();
    await a.presence.seen(collector.id, { channel: "remotecfg", intervalSeconds: 10 });
    await caughtUp(b.collectors, b.store, collector.id);
    advance(60_000);
    const first = await Promise.all([a.presence.tick(), b.presence.tick()]);
    expect(first.filter((r) => r === null)).toHaveLength(1);
    expect(first.filter((r) => r === 1)).toHaveLength(1);
    expect((await doc()).data.status).toBe("offline");
    const [holder, other] = first[0] === null ? [b, a] : [a, b];
    expect(await other.presence.tick()).toBeNull();
    await holder.presence.stop(); // releases the lease
    expect(await other.presence.tick()).toBe(0);
    expect(await holder.presence.tick()).toBeNull();
  });
});
