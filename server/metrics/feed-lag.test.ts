/**
 * svc_change_feed_lag_seconds: measured on the change feed itself, between two
 * PostgreSQL replicas (one database, two stores) and on the embedded store,
 * and read back through Prometheus' text parser.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { parsePromText } from "../../test/promtext/promtext.ts";
import { CHANGES_CHANNEL, PostgresStore } from "../store/postgres.ts";
import { SqliteStore } from "../store/sqlite.ts";
import { type TestDatabases, testDatabases } from "../store/testdb.ts";
import { ServerMetrics } from "./metrics.ts";
import { CountedStore } from "./store.ts";

/** The lag histogram as a scraper reads it. */
async function lag(metrics: ServerMetrics) {
  const family = parsePromText(await metrics.registry.expose()).find((f) => f.name === "svc_change_feed_lag_seconds");
  return family!.metrics[0]!;
}

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(10);
  }
}

describe("PostgreSQL: two replicas on one database", () => {
  let pg: TestDatabases;
  let uri: string;
  beforeAll(async () => {
    pg = await testDatabases();
    uri = await pg.create("feedlag");
  });
  afterAll(async () => pg?.dropAll());

  test("a write on A is timed from its commit to B hearing it; an announcement two seconds old lands in the 2.5 s bucket", async () => {
    const a = await PostgresStore.open(uri);
    const bMetrics = new ServerMetrics();
    const b = new CountedStore(await PostgresStore.open(uri), bMetrics);
    const raw = new SQL(uri, { max: 1 });
    try {
      expect((await lag(bMetrics)).count).toBe(0);
      await a.write([{ op: "put", collection: "probe", id: "p1", data: {} }]);
      await until("B to hear A's write", () => bMetrics.feedLag.labels().count === 1);
      const first = await lag(bMetrics);
      expect(first.sum).toBeGreaterThanOrEqual(0);
      expect(first.sum).toBeLessThan(2); // same host, same clock: the feed's own delay

      // A replica whose write took two seconds to arrive (or whose clock runs two seconds behind): the announcement as A would send it.
      const t = Date.now() - 2000;
      await raw`SELECT pg_notify(${CHANGES_CHANNEL}, ${JSON.stringify({ w: "other:1", t, i: 0, n: 1, c: [["probe", "p2", 1]] })})`;
      await until("B to hear the old announcement", () => bMetrics.feedLag.labels().count === 2);
      const second = await lag(bMetrics);
      const bucket = (le: number) => second.buckets!.find((x) => x.le === le)!.count;
      expect(bucket(1)).toBe(1);
      expect(bucket(2.5)).toBe(2);
      expect(second.sum! - first.sum!).toBeGreaterThanOrEqual(2);

      // An older server's announcement carries no time: counted as changes, not timed.
      await raw`SELECT pg_notify(${CHANGES_CHANNEL}, ${JSON.stringify({ w: "old:1", i: 0, n: 1, c: [["probe", "p3", 1]] })})`;
      await a.write([{ op: "put", collection: "probe", id: "p4", data: {} }]);
      await until("B to hear the next write", () => bMetrics.feedLag.labels().count === 3);
      const changes = parsePromText(await bMetrics.registry.expose()).find((f) => f.name === "svc_store_changes_total")!;
      expect(changes.metrics[0]!.value).toBe(4);
    } finally {
      await raw.close();
      await b.close();
      await a.close();
    }
  });
});

test("embedded store: every write is timed as it reaches the watchers", async () => {
  const metrics = new ServerMetrics();
  const store = new CountedStore(new SqliteStore(":memory:"), metrics);
  try {
    await store.write([{ op: "put", collection: "probe", id: "p1", data: {} }]);
    await store.write([
      { op: "put", collection: "probe", id: "p2", data: {} },
      { op: "put", collection: "probe", id: "p3", data: {} },
    ]);
    const measured = await lag(metrics);
    expect(measured.count).toBe(2); // per write, not per document
    expect(measured.sum).toBeLessThan(0.5);
  } finally {
    await store.close();
  }
});
