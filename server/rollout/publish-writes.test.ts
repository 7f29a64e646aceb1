/**
 * PublishWrites on SQLite and PostgreSQL: a store that fails at each slice of
 * a sliced publish leaves nothing visible (the first slice) or the rollout
 * recorded interrupted by its writer at once, naming exactly the targets
 * written, with one `config.publish` audit entry saying so; a publish another
 * replica is still writing is not taken for interrupted. The kill -9 case,
 * where recovery runs on restart, is test/faults/publish-kill9.test.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import pino from "pino";
import { LEASES } from "../store/lease.ts";
import { PostgresStore } from "../store/postgres.ts";
import { SqliteStore } from "../store/sqlite.ts";
import type { Store, WriteOp } from "../store/store.ts";
import { testDatabases, type TestDatabases } from "../store/testdb.ts";
import { CONFIGS, LATEST, RENDERED, ROLLOUTS, targetWrites, WRITES, type CollectorConfig, type Rollout } from "./records.ts";
import { PublishWrites, type PublishWrite } from "./publish-writes.ts";

const log = pino({ level: "silent" });
const IDS = ["c1", "c2", "c3", "c4", "c5", "c6", "c7"];
/** Store operations per slice: one rendered config and 7 × 2 target writes make 4 slices of 1 + 2 + 2 + 2 collectors. */
const SLICE = 4;
const WRITTEN_AFTER = [1, 3, 5];

let pg: TestDatabases;
beforeAll(async () => {
  pg = await testDatabases();
});
afterAll(async () => {
  await pg?.dropAll();
});

function publishOf(): PublishWrite {
  const time = new Date().toISOString();
  const rollout: Rollout = {
    id: Bun.randomUUIDv7(),
    kind: "publish",
    commit: "c2",
    actor: "user:a",
    startedAt: time,
    scope: "fleet",
    collectorIds: IDS,
    changed: IDS,
  };
  return {
    rollout,
    who: { actor: "user:a", remoteAddr: "10.0.0.1" },
    details: { commit: "c2", scope: "fleet", collectors: IDS.length, changed: IDS.length },
    rendered: [{ op: "put", collection: RENDERED, id: "h2", data: { hash: "h2", runtime: "otelcol", contentType: "text/yaml", body: "" } }],
    first: [
      { op: "put", collection: ROLLOUTS, id: rollout.id, data: rollout, expect: "absent" },
      { op: "put", collection: LATEST.collection, id: LATEST.id, data: { rolloutId: rollout.id } },
    ],
    resumed: 0,
    perCollector: IDS.map((id) =>
      targetWrites(id, { seq: 1, commit: "c2", hash: "h2", time, state: "outdated", actor: "user:a", cause: "publish", rolloutId: rollout.id }),
    ),
    last: [{ op: "put", collection: "system", id: "fleet_publish", data: { commit: "c2", at: time } }],
  };
}

/** `store` with its writes passed through `before` first (which may throw or wait). */
function intercepted(store: Store, before: (ops: WriteOp[]) => void | Promise<void>): Store {
  const write: Store["write"] = async (ops, audit) => {
    await before(ops);
    return store.write(ops, audit);
  };
  return new Proxy(store, {
    get(target, key) {
      if (key === "write") return write;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** A store that fails the slice after the first `after` ones, once (the writer's own record of the interruption then lands). */
function failingAt(store: Store, after: number): Store {
  let slices = 0;
  return intercepted(store, (ops) => {
    if (!ops.some((op) => op.collection === WRITES)) return;
    if (++slices === after + 1) throw new Error("the database went away");
  });
}

const backends: [string, () => Promise<Store>][] = [
  ["SQLite", async () => new SqliteStore(":memory:")],
  ["PostgreSQL", async () => PostgresStore.open(await pg.create(`pw_${Math.random().toString(36).slice(2, 8)}`))],
];

for (const [name, open] of backends) {
  describe(name, () => {
    test("a failure at each slice: nothing visible, or the rollout recorded interrupted with exactly the targets written and its audit entry", async () => {
      for (let after = 0; after < 4; after++) {
        const store = await open();
        try {
          const publish = publishOf();
          const { id } = publish.rollout;
          await expect(new PublishWrites(failingAt(store, after), log, SLICE).write(publish)).rejects.toThrow("the database went away");
          const targets = (await store.list<CollectorConfig>(CONFIGS)).map((d) => d.data);
          const audit = await store.queryAudit({ action: "config.publish", limit: 10 });
          expect({ markers: await store.count(WRITES), leases: await store.count(LEASES) }).toEqual({ markers: 0, leases: 0 });
          if (after === 0) {
            expect({ rollouts: await store.count(ROLLOUTS), targets: targets.length, audit: audit.length }).toEqual({ rollouts: 0, targets: 0, audit: 0 });
            continue;
          }
          const written = WRITTEN_AFTER[after - 1]!;
          const rollout = (await store.get<Rollout>(ROLLOUTS, id))!.data;
          expect(rollout).toMatchObject({ changed: IDS.slice(0, written), collectorIds: IDS.slice(0, written), interrupted: { planned: IDS.length, written } });
          expect(targets.map((t) => [t.collectorId, t.rolloutId])).toEqual(IDS.slice(0, written).map((c) => [c, id]));
          expect(
            audit.map((e) => ({ actor: e.actor, remoteAddr: e.remoteAddr, outcome: e.outcome, resourceId: e.resourceId, changed: e.details.changed })),
          ).toEqual([{ actor: "user:a", remoteAddr: "10.0.0.1", outcome: "failure", resourceId: id, changed: written }]);
          // The fleet's commit is only recorded once every target is.
          expect(await store.get("system", "fleet_publish")).toBeNull();
        } finally {
          await store.close();
        }
      }
    }, 60_000);
  });
}

test("PostgreSQL: a publish another replica is still writing is not taken for interrupted; it completes", async () => {
  const uri = await pg.create("live");
  const [a, b] = [await PostgresStore.open(uri), await PostgresStore.open(uri)];
  try {
    // Replica A stops before its second slice until let go.
    let letGo!: () => void;
    const gate = new Promise<void>((resolve) => (letGo = resolve));
    let reached!: () => void;
    const waiting = new Promise<void>((resolve) => (reached = resolve));
    let slices = 0;
    const slow = intercepted(a, async (ops) => {
      if (ops.some((op) => op.collection === WRITES) && ++slices === 2) {
        reached();
        await gate;
      }
    });
    const publish = publishOf();
    const writing = new PublishWrites(slow, log, SLICE).write(publish);
    await waiting;
    // Replica B looks for interrupted publishes meanwhile: the lease is A's.
    await new PublishWrites(b, log, SLICE).recover();
    expect((await b.get<Rollout>(ROLLOUTS, publish.rollout.id))!.data.interrupted).toBeUndefined();
    expect(await b.count(WRITES)).toBe(1);
    letGo();
    await writing;
    const rollout = (await b.get<Rollout>(ROLLOUTS, publish.rollout.id))!.data;
    expect({
      interrupted: rollout.interrupted,
      changed: rollout.changed.length,
      targets: await b.count(CONFIGS),
      markers: await b.count(WRITES),
      leases: await b.count(LEASES),
    }).toEqual({
      interrupted: undefined,
      changed: IDS.length,
      targets: IDS.length,
      markers: 0,
      leases: 0,
    });
    expect((await b.queryAudit({ action: "config.publish", limit: 10 })).map((e) => [e.outcome, e.details.changed])).toEqual([["success", IDS.length]]);
  } finally {
    await Promise.all([a.close(), b.close()]);
  }
}, 60_000);
