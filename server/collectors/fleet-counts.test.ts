/**
 * The dashboard's collector counts kept beside the view (fleet-counts.ts)
 * equal a full recount of the stored records after random sequences of
 * creates, status, mode and health changes and deletes, written by this
 * replica (the feed carries the record), by another (the view reads it), and
 * while the feed was cut off, followed by a resync that reloads the view.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { reportingOnly } from "../../shared/attention.ts";
import { COLLECTOR_STATUSES, type CollectorStatus } from "../../shared/collector-status.ts";
import type { Collector } from "../../shared/collectors.ts";
import { MANAGEMENT_MODES, type ManagementMode } from "../../shared/vocabulary.ts";
import { SqliteStore } from "../store/sqlite.ts";
import type { WriteOp } from "../store/store.ts";
import { gated } from "../store/gated-feed.ts";
import { Collectors, COLLECTORS } from "./collectors.ts";
import { randomCollector, seeded } from "../testutil.ts";

const { random, pick } = seeded(7);
const randomness = { random, pick };

let store: SqliteStore;
beforeEach(() => {
  store = new SqliteStore(":memory:");
});
afterEach(() => store.close());

function record(id: string): Collector {
  return randomCollector(id, randomness, { name: `c-${id}`, managementMode: pick(MANAGEMENT_MODES) });
}

/** The dashboard's collector figures by walking every stored record, as the dashboard did before. */
async function recount() {
  const docs = await store.list<Collector>(COLLECTORS);
  const byStatus = Object.fromEntries(COLLECTOR_STATUSES.map((s) => [s, 0])) as Record<CollectorStatus, number>;
  const byMode = Object.fromEntries(MANAGEMENT_MODES.map((m) => [m, 0])) as Record<ManagementMode, number>;
  for (const { data } of docs) {
    byStatus[data.status]++;
    byMode[data.managementMode]++;
  }
  const ids = docs.map((d) => d.data).sort((a, b) => (a.id < b.id ? -1 : 1));
  return {
    collectors: { total: docs.length, byStatus, byMode },
    offline: ids.filter((c) => c.status === "offline").map((c) => c.id),
    reportingOnly: ids.filter(reportingOnly).map((c) => c.id),
  };
}

async function kept(collectors: Collectors) {
  const { counts } = await collectors.counters();
  return { collectors: counts.collectors(), offline: [...counts.offline.values()], reportingOnly: [...counts.reportingOnly.values()] };
}

test("the counts equal a recount after random writes from this replica, another, and a missed stretch healed by a resync", async () => {
  const { gate, wrapped, resync, land } = gated(store);
  const collectors = new Collectors(wrapped);
  let next = 0;
  const live: string[] = [];
  const newId = () => `id-${String(Math.floor(random() * 1e6)).padStart(7, "0")}-${next++}`;
  // Seeded before the view loads: counted by the first load.
  const seeded = Array.from({ length: 40 }, newId);
  await store.write(seeded.map((id) => ({ op: "put" as const, collection: COLLECTORS, id, data: record(id) })));
  live.push(...seeded);
  expect(await kept(collectors)).toEqual(await recount());

  for (let round = 0; round < 60; round++) {
    gate.mode = pick(["own", "own", "other", "cut"] as const);
    const ops: WriteOp[] = [];
    for (let n = 1 + Math.floor(random() * 8); n > 0; n--) {
      const roll = random();
      if (roll < 0.3 || live.length === 0) {
        const id = newId();
        live.push(id);
        ops.push({ op: "put", collection: COLLECTORS, id, data: record(id) });
      } else if (roll < 0.8) {
        // A status, mode or health change of a live collector (its name kept).
        const id = pick(live);
        if (ops.some((op) => op.id === id)) continue;
        ops.push({ op: "put", collection: COLLECTORS, id, data: record(id) });
      } else {
        const id = live.splice(Math.floor(random() * live.length), 1)[0]!;
        if (ops.some((op) => op.id === id)) continue;
        ops.push({ op: "delete", collection: COLLECTORS, id });
      }
    }
    await land(ops);
    expect(await kept(collectors)).toEqual(await recount());
  }
  // A deleted id created again (its version restarts) after a missed stretch.
  const again = live[0]!;
  gate.mode = "cut";
  await store.write([{ op: "delete", collection: COLLECTORS, id: again }]);
  await store.write([{ op: "put", collection: COLLECTORS, id: again, data: { ...record(again), status: "offline" } }]);
  gate.mode = "own";
  resync();
  expect(await kept(collectors)).toEqual(await recount());
  expect((await collectors.countByStatus()).offline).toBe((await recount()).collectors.byStatus.offline);
  collectors.close();
});
