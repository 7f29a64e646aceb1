/**
 * The dashboard's latest fleet rollout, its counts and first failures kept
 * current beside the target index and the collectors view (latest-fleet.ts,
 * rollout-tally.ts), equals what the dashboard built before from
 * StagedRollouts.status (over a fresh load of the store, a full recount)
 * after random sequences of publishes, staged or not, batch releases, pauses
 * and aborts, a publish's writes progressing, target changes (states,
 * errors, later rollouts taking collectors over), collector status and
 * health changes, deletes, writes of another replica, and a missed stretch
 * healed by a resync.
 */
import { afterEach, beforeEach, expect, spyOn, test } from "bun:test";
import type { Collector } from "../../shared/collectors.ts";
import type { Dashboard } from "../../shared/dashboard.ts";
import { Collectors, COLLECTORS } from "../collectors/collectors.ts";
import { gated } from "../store/gated-feed.ts";
import { SqliteStore } from "../store/sqlite.ts";
import type { WriteOp } from "../store/store.ts";
import { TargetHistory } from "./history.ts";
import { LatestFleetRollout, summaryOfStatus } from "./latest-fleet.ts";
import { ACTIVE, CONFIGS, LATEST_FLEET, ROLLOUTS, WRITES, type CollectorConfig, type Rollout } from "./records.ts";
import { StagedRollouts } from "./staged.ts";
import { TargetIndex } from "./target-index.ts";
import { randomCollector, seeded } from "../testutil.ts";

const { random, pick } = seeded(23);
const randomness = { random, pick };
const shuffled = <T>(items: readonly T[]): T[] =>
  items
    .map((item) => [random(), item] as const)
    .sort((a, b) => a[0] - b[0])
    .map(([, item]) => item);
const SAMPLE = 3;

let store: SqliteStore;
beforeEach(() => {
  store = new SqliteStore(":memory:");
});
afterEach(() => store.close());

const IDS = Array.from({ length: 25 }, (_, i) => `c-${String(i).padStart(2, "0")}`);
const rollouts: Rollout[] = [];

function collector(id: string): Collector {
  return randomCollector(id, randomness, { name: `name-${id}` });
}

function target(id: string): CollectorConfig {
  const state = pick(["current", "applying", "failed", "outdated"] as const);
  const rollout = rollouts.length > 0 && random() < 0.8 ? pick(rollouts) : undefined;
  return {
    collectorId: id,
    targetHash: "h",
    targetCommit: "c",
    targetSeq: 1,
    state,
    error: state === "failed" || random() < 0.1 ? pick(["", "broke", "exporter down"]) : null,
    ...(rollout ? { rolloutId: rollout.id } : {}),
    updatedAt: "",
  };
}

function newRollout(): { rollout: Rollout; ops: WriteOp[] } {
  const collectorIds = shuffled(IDS.filter(() => random() < 0.7));
  const changed = shuffled(collectorIds.filter(() => random() < 0.7));
  const staged = random() < 0.5 && changed.length > 2;
  const cut = Math.floor(changed.length / 3);
  const rollout: Rollout = {
    id: Bun.randomUUIDv7(),
    kind: "publish",
    commit: `commit-${rollouts.length}`,
    actor: "ann",
    startedAt: new Date().toISOString(),
    scope: "fleet",
    collectorIds,
    changed,
    ...(staged
      ? {
          strategy: { batchSize: cut, pauseSeconds: 30, failureThreshold: 0.5 },
          batchEnds: [cut, 2 * cut, changed.length],
          released: Math.floor(random() * 3),
          phase: pick(["running", "paused", "done", "aborted"] as const),
          pausedReason: "too many failed",
        }
      : {}),
    ...(random() < 0.1 && rollouts.length > 0 ? { resumedBy: pick(rollouts).id } : {}),
  };
  rollouts.push(rollout);
  const ops: WriteOp[] = [
    { op: "put", collection: ROLLOUTS, id: rollout.id, data: rollout },
    { op: "put", collection: LATEST_FLEET.collection, id: LATEST_FLEET.id, data: { rolloutId: rollout.id } },
  ];
  if (staged && random() < 0.7) ops.push({ op: "put", collection: ACTIVE.collection, id: ACTIVE.id, data: { rolloutId: rollout.id } });
  if (random() < 0.7) ops.push(progress(rollout));
  return { rollout, ops };
}

const progress = (rollout: Rollout): WriteOp => ({
  op: "put",
  collection: WRITES,
  id: rollout.id,
  data: { rolloutId: rollout.id, written: Math.floor(random() * (rollout.changed.length + 1)), who: { actor: "ann" }, details: {} },
});

/** What the dashboard built before: the whole status of the latest fleet rollout, over a fresh load of the store. */
async function recount(): Promise<Dashboard["rollout"]> {
  const collectors = new Collectors(store);
  const index = new TargetIndex(store);
  const staged = new StagedRollouts(store, collectors, new TargetHistory(store, collectors), index);
  const status = await staged.status(undefined, "fleet");
  const summary = await summaryOfStatus(status, SAMPLE, async (id) => (await collectors.get(id).catch(() => null))?.name);
  index.close();
  collectors.close();
  return summary;
}

test("the latest fleet rollout's counts and failures equal its status after random rollouts, target and collector writes, another replica's, and a resync", async () => {
  const { gate, wrapped, land } = gated(store);
  const collectors = new Collectors(wrapped);
  const index = new TargetIndex(wrapped);
  const latest = new LatestFleetRollout(wrapped, collectors, index);
  // No pointer yet: the dashboard asks StagedRollouts.status.
  expect(await latest.summary(SAMPLE)).toBeNull();
  await store.write(IDS.slice(0, 20).flatMap((id) => [{ op: "put" as const, collection: COLLECTORS, id, data: collector(id) }]));
  await store.write(newRollout().ops);
  await store.write(IDS.slice(0, 18).map((id) => ({ op: "put" as const, collection: CONFIGS, id, data: target(id) })));
  expect(await latest.summary(SAMPLE)).toEqual(await recount());

  let nonEmpty = 0;
  for (let round = 0; round < 150; round++) {
    gate.mode = pick(["own", "own", "other", "cut"] as const);
    const ops: WriteOp[] = [];
    const touched = new Set<string>();
    const once = (key: string) => !touched.has(key) && Boolean(touched.add(key));
    const current = rollouts.at(-1)!;
    for (let n = 1 + Math.floor(random() * 5); n > 0; n--) {
      const id = pick(IDS);
      const kind = pick(["collector", "target", "target", "target", "deleteCollector", "deleteTarget", "release", "progress", "publish"] as const);
      if (kind === "collector" && once(`c/${id}`)) ops.push({ op: "put", collection: COLLECTORS, id, data: collector(id) });
      else if (kind === "target" && once(`t/${id}`)) ops.push({ op: "put", collection: CONFIGS, id, data: target(id) });
      else if (kind === "deleteCollector" && once(`c/${id}`) && (await store.get(COLLECTORS, id))) ops.push({ op: "delete", collection: COLLECTORS, id });
      else if (kind === "deleteTarget" && once(`t/${id}`) && (await store.get(CONFIGS, id))) ops.push({ op: "delete", collection: CONFIGS, id });
      else if (kind === "release" && current.batchEnds && once("rollout")) {
        // A batch released, a pause, an abort or the end: a new version of the same rollout.
        const next: Rollout = {
          ...current,
          released: Math.min(2, (current.released ?? 0) + 1),
          phase: pick(["running", "paused", "done", "aborted"] as const),
        };
        rollouts[rollouts.length - 1] = next;
        ops.push({ op: "put", collection: ROLLOUTS, id: next.id, data: next });
        if (next.phase === "done" || next.phase === "aborted") ops.push({ op: "delete", collection: ACTIVE.collection, id: ACTIVE.id });
      } else if (kind === "progress" && once("writes")) ops.push(progress(current));
      else if (kind === "publish" && random() < 0.3 && once("rollout") && once("writes")) ops.push(...newRollout().ops);
    }
    if (ops.length === 0) continue;
    await land(ops);
    const expected = await recount();
    if (expected.failures.length > 0 && expected.counts.queued > 0) nonEmpty++;
    expect(await latest.summary(SAMPLE)).toEqual(expected);
  }
  // The runs met failures beside queued collectors: the boundary was exercised.
  expect(nonEmpty).toBeGreaterThan(5);

  // A refresh reads nothing from the store once it has read what it needs, nor after a publish on this replica.
  gate.mode = "own";
  await latest.summary(SAMPLE);
  const gets = spyOn(store, "get");
  await latest.summary(SAMPLE);
  const published = newRollout();
  await store.write(published.ops);
  await store.write([progress(published.rollout)]);
  const after = await latest.summary(SAMPLE);
  expect(gets).not.toHaveBeenCalled();
  gets.mockRestore();
  expect(after).toEqual(await recount());
  latest.close();
  index.close();
  collectors.close();
});
