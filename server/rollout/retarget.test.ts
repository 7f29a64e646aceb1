/** Which commit a collector is re-rendered at, and how a rollout's skipped collectors read, including what older servers left in the store. */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { SqliteStore } from "../store/sqlite.ts";
import { currentCommit } from "./retarget.ts";
import { latestFleetPublish, rolloutSkipped, type CollectorConfig, type Rollout } from "./records.ts";

let store: SqliteStore;
beforeEach(() => {
  store = new SqliteStore(":memory:");
});
afterEach(() => store.close());

const target = (commit: string, targetAt?: string): CollectorConfig => ({
  collectorId: "c",
  targetHash: "h",
  targetCommit: commit,
  targetSeq: 1,
  state: "current",
  error: null,
  ...(targetAt ? { targetAt } : {}),
  updatedAt: "2026-11-24T12:00:00.000Z",
});
const fleet = { commit: "fleet", at: "2026-11-24T10:00:00.000Z" };

test("a target recorded after the fleet publish keeps its commit; an older one, or one from before targetAt was kept, is on the fleet's", () => {
  expect(currentCommit(target("rolled-back", "2026-11-24T11:00:00.000Z"), fleet)).toBe("rolled-back");
  expect(currentCommit(target("older", "2026-11-24T09:00:00.000Z"), fleet)).toBe("fleet");
  expect(currentCommit(target("legacy"), fleet)).toBe("fleet");
  expect(currentCommit(target("legacy"), null)).toBe("legacy");
  expect(currentCommit(undefined, fleet)).toBe("fleet");
  expect(currentCommit(undefined, null)).toBeNull();
});

test("without a recorded fleet publish, the latest rollout stands for it only when it was one", async () => {
  expect(await latestFleetPublish(store)).toBeNull();
  const rollout = (id: string, kind: Rollout["kind"], scope: string): Rollout => ({
    id,
    kind,
    commit: `commit-${id}`,
    actor: "sa:admin",
    startedAt: `2026-11-24T0${id}:00:00.000Z`,
    scope,
    collectorIds: [],
    changed: [],
  });
  const latest = async (r: Rollout) =>
    store.write([
      { op: "put", collection: "rollouts", id: r.id, data: r },
      { op: "put", collection: "system", id: "latest_rollout", data: { rolloutId: r.id } },
    ]);
  await latest(rollout("1", "publish", "fleet"));
  expect(await latestFleetPublish(store)).toEqual({ commit: "commit-1", at: "2026-11-24T01:00:00.000Z" });
  await latest(rollout("2", "rollback", "c"));
  expect(await latestFleetPublish(store)).toBeNull();
  await store.write([{ op: "put", collection: "system", id: "fleet_publish", data: fleet }]);
  expect(await latestFleetPublish(store)).toEqual(fleet);
});

test("a rollout's skipped collectors carry their reason; one recorded before reasons were kept reads as a reason not recorded", () => {
  const base: Rollout = {
    id: "r",
    kind: "publish",
    commit: "c",
    actor: "a",
    startedAt: "2026-11-24T00:00:00.000Z",
    scope: "fleet",
    collectorIds: ["x", "y"],
    changed: [],
  };
  const reason = { collectorId: "x", name: "edge-x", path: "attributes.gateway", message: "collector 'x' has no attribute 'gateway'" };
  expect(rolloutSkipped(base)).toEqual([]);
  expect(rolloutSkipped({ ...base, skipped: [reason] })).toEqual([reason]);
  const legacy = { ...base, skipped: ["y"] } as unknown as Rollout;
  expect(rolloutSkipped(legacy)).toEqual([
    { collectorId: "y", name: "y", path: null, message: "its config could not be rendered (the reason was not recorded)" },
  ]);
});
