import { afterEach, beforeEach, expect, test } from "bun:test";
import pino from "pino";
import { SqliteStore } from "../store/sqlite.ts";
import { ENDS_SINCE, RolloutEnds } from "./ends.ts";
import { CONFIGS, LATEST, ROLLOUTS, type Rollout } from "./records.ts";

let store: SqliteStore;
let ends: RolloutEnds | undefined;
/** The rollouts recordEnd was asked about, in order; it answers `ended`. */
let asked: string[];
let ended: Set<string>;

beforeEach(() => {
  store = new SqliteStore(":memory:");
  asked = [];
  ended = new Set();
});
afterEach(async () => {
  await ends?.stop();
  store.close();
});

const rollout = (id: string, collectorIds: string[], end?: Rollout["ended"]): Rollout => ({
  id,
  kind: "publish",
  commit: "c1",
  actor: "user:a",
  startedAt: "2026-01-01T00:00:00.000Z",
  scope: "fleet",
  collectorIds,
  changed: collectorIds,
  ...(end ? { ended: end } : {}),
});

function start() {
  ends = new RolloutEnds(
    store,
    {
      recordEnd: async (id) => {
        asked.push(id);
        return ended.has(id);
      },
      // The index counts nothing as left: every look asks recordEnd.
      unsettled: async () => new Set(),
    },
    pino({ level: "silent" }),
  );
  ends.start();
}

/** Waits, up to its own deadline, until `done` holds (the looks run on a timer, once a second at most). */
async function until(done: () => boolean | Promise<boolean>) {
  const deadline = Date.now() + 10_000;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error("not reached before the deadline");
    await Bun.sleep(20);
  }
  await ends!.settled();
}

test("the first start over older state marks every rollout but the latest not_recorded, once, and looks at the latest", async () => {
  await store.write([
    { op: "put", collection: ROLLOUTS, id: "r1", data: rollout("r1", ["a"]) },
    { op: "put", collection: ROLLOUTS, id: "r2", data: rollout("r2", ["a", "b"]) },
    { op: "put", collection: LATEST.collection, id: LATEST.id, data: { rolloutId: "r2" } },
  ]);
  start();
  await until(() => asked.includes("r2"));
  expect(asked).toEqual(["r2"]);
  expect((await store.get<Rollout>(ROLLOUTS, "r1"))!.data.ended).toMatchObject({ outcome: "not_recorded" });
  expect((await store.get<Rollout>(ROLLOUTS, "r2"))!.data.ended).toBeUndefined();
  expect(await store.get(ENDS_SINCE.collection, ENDS_SINCE.id)).not.toBeNull();

  // Started again (the marker is there): an open rollout from before is looked at, not marked.
  await ends!.stop();
  await store.write([{ op: "put", collection: ROLLOUTS, id: "r3", data: rollout("r3", ["c"]) }]);
  asked = [];
  start();
  await until(() => asked.length >= 2);
  expect(asked.sort()).toEqual(["r2", "r3"]);
  expect((await store.get<Rollout>(ROLLOUTS, "r3"))!.data.ended).toBeUndefined();
});

test("a later rollout takes the collectors it changes out of an older open rollout's counts, and looks at it again", async () => {
  await store.write([{ op: "put", collection: ENDS_SINCE.collection, id: ENDS_SINCE.id, data: { at: "2026-01-01T00:00:00.000Z" } }]);
  const handed: (string[] | undefined)[] = [];
  ends = new RolloutEnds(
    store,
    { recordEnd: async (id, handedOn) => (asked.push(id), handed.push(handedOn && [...handedOn].sort()), false), unsettled: async () => new Set() },
    pino({ level: "silent" }),
  );
  ends.start();
  await store.write([{ op: "put", collection: ROLLOUTS, id: "r1", data: rollout("r1", ["a", "b", "c"]) }]);
  await until(() => asked.length >= 1);
  await store.write([{ op: "put", collection: ROLLOUTS, id: "r2", data: { ...rollout("r2", ["b", "c", "d"]), changed: ["b", "d"] } }]);
  await until(() => asked.length >= 3);
  expect(asked.slice(1).sort()).toEqual(["r1", "r2"]);
  expect(handed[asked.lastIndexOf("r1")]).toEqual(["b"]);
});

test("a change to a target of an open rollout looks at it again until it has ended; other targets and ended rollouts are left alone", async () => {
  await store.write([{ op: "put", collection: ENDS_SINCE.collection, id: ENDS_SINCE.id, data: { at: "2026-01-01T00:00:00.000Z" } }]);
  start();
  await store.write([
    { op: "put", collection: ROLLOUTS, id: "r1", data: rollout("r1", ["a", "b"]) },
    {
      op: "put",
      collection: ROLLOUTS,
      id: "old",
      data: rollout("old", ["a"], {
        at: "2026-01-01T00:00:00.000Z",
        outcome: "completed",
        counts: { current: 1, applying: 0, failed: 0, outdated: 0, offline: 0, reporting_only: 0, queued: 0 },
      }),
    },
  ]);
  await until(() => asked.length >= 1);
  expect(asked).toEqual(["r1"]);

  // Another collector's target: not this rollout's business.
  await store.write([{ op: "put", collection: CONFIGS, id: "z", data: {} }]);
  await Bun.sleep(50);
  await ends!.settled();
  expect(asked).toEqual(["r1"]);

  // One of its collectors applied: looked at again; this time it has ended, and is not looked at after.
  ended.add("r1");
  await store.write([{ op: "put", collection: CONFIGS, id: "b", data: {} }]);
  await until(() => asked.length >= 2);
  expect(asked).toEqual(["r1", "r1"]);
  await store.write([{ op: "put", collection: CONFIGS, id: "a", data: {} }]);
  await Bun.sleep(50);
  await ends!.settled();
  expect(asked).toEqual(["r1", "r1"]);
});

test("while the index counts collectors of a rollout as not settled, the store is not asked; later looks judge only those and the ones that changed", async () => {
  await store.write([{ op: "put", collection: ENDS_SINCE.collection, id: ENDS_SINCE.id, data: { at: "2026-01-01T00:00:00.000Z" } }]);
  /** What the index would say is not settled yet, and the collectors each look judged (undefined: all of them). */
  const left = new Set(["a", "b"]);
  const judged: (string[] | undefined)[] = [];
  ends = new RolloutEnds(
    store,
    {
      recordEnd: async (id) => (asked.push(id), true),
      unsettled: async (_rollout, _handedOn, ids) => {
        judged.push(ids && [...ids].sort());
        return new Set([...(ids ?? ["a", "b", "c", "d"])].filter((id) => left.has(id)));
      },
    },
    pino({ level: "silent" }),
  );
  ends.start();
  await store.write([{ op: "put", collection: ROLLOUTS, id: "r1", data: rollout("r1", ["a", "b", "c", "d"]) }]);
  await until(() => judged.length >= 1);
  expect(judged).toEqual([undefined]);
  expect(asked).toEqual([]);

  // c changes (it was settled already): only c is judged again; a and b stay as judged, so not ended.
  await store.write([{ op: "put", collection: CONFIGS, id: "c", data: {} }]);
  await until(() => judged.length >= 2);
  expect(judged[1]).toEqual(["c"]);
  expect(asked).toEqual([]);

  // a settles: judged alone, b is still left.
  left.delete("a");
  await store.write([{ op: "put", collection: CONFIGS, id: "a", data: {} }]);
  await until(() => judged.length >= 3);
  expect(judged[2]).toEqual(["a"]);
  expect(asked).toEqual([]);

  // b settles: none is left, the store decides, and the rollout is no longer looked at.
  left.delete("b");
  await store.write([{ op: "put", collection: CONFIGS, id: "b", data: {} }]);
  await until(() => asked.length >= 1);
  expect(judged[3]).toEqual(["b"]);
  expect(asked).toEqual(["r1"]);
  await store.write([{ op: "put", collection: CONFIGS, id: "c", data: {} }]);
  await Bun.sleep(50);
  await ends!.settled();
  expect(judged).toHaveLength(4);
});
