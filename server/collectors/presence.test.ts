import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { SYSTEM_ACTOR } from "../audit/audit.ts";
import { SqliteStore } from "../store/sqlite.ts";
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
  expect(await stored()).toMatchObject({ status: "online", lastSeen: "2026-01-01T00:00:00.000Z", health: { channel: "opamp", intervalSeconds: 30, healthy: true, error: null } });
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
