/**
 * The MongoDB adapter. The Store contract and the log tests run against a
 * real MongoDB wire-protocol server on every run: FerretDB 1.24.2 on SQLite
 * (test/peers/bin/ferretdb, started on a free loopback port for this file).
 * When SVC_TEST_MONGODB_URI names a MongoDB server, they run against it as
 * well, e.g. SVC_TEST_MONGODB_URI=mongodb://127.0.0.1:27017/ ; each run uses
 * databases of its own and drops them after. The pure parts and the store's behaviour
 * while nothing answers at the address need no server.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MongoClient, MongoServerError } from "mongodb";
import { ConflictError, StorageUnavailableError } from "../errors.ts";
import { storeContract } from "./contract.ts";
import { backoffDelay, Echoes, Watchers } from "./external.ts";
import {
  auditFilter,
  changesOf,
  changesText,
  docKey,
  type EntryBody,
  isConnectionError,
  isDuplicateKey,
  listFilter,
  type LogRecord,
  MongoStore,
  type MongoStoreOptions,
  newestRows,
  rowId,
  seqId,
  splitText,
  uriDatabase,
} from "./mongodb.ts";
import type { AuditEntry, Change } from "./store.ts";
import { until } from "../../test/opamp/helpers.ts";
import { type FerretDBServer, startFerretDB } from "../../test/ferretdb.ts";

const SERVER = process.env.SVC_TEST_MONGODB_URI ?? "";

/** A port nothing listens on: connections are refused at once. */
function closedPort(): number {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = server.port;
  server.stop(true);
  return port;
}

describe("MongoDB store: pure parts", () => {
  test("keys are JSON texts: unique, NUL-free, reversible; log numbers sort as strings", () => {
    expect(docKey("t", "a")).toBe('["t","a"]');
    expect(docKey("a\u0000b", "c")).not.toContain("\u0000");
    expect(docKey("a", "b/c")).not.toBe(docKey("a/b", "c"));
    expect(docKey('x"', "y")).not.toBe(docKey("x", '"y'));
    expect(JSON.parse(rowId("ü/☃", "id 1", 7))).toEqual(["ü/☃", "id 1", 7]);
    expect(rowId("t", "a", 1)).not.toBe(rowId("t", "a", 2));
    expect(seqId(42)).toBe("000000000000042");
    expect([seqId(10), seqId(9), seqId(100)].sort()).toEqual([seqId(9), seqId(10), seqId(100)]);
  });

  test.each([
    ["mongodb://127.0.0.1:27017/fleet", "fleet"],
    ["mongodb://127.0.0.1:27017/fleet?replicaSet=rs0", "fleet"],
    ["mongodb://127.0.0.1:27017/?replicaSet=rs0", ""],
    ["mongodb://127.0.0.1:27017", ""],
    ["mongodb+srv://svc:p%40ss%3Aw%2Frd@db.example.com/svc", "svc"],
    ["mongodb://svc:s3cret@a.example.com:27017,b.example.com:27017/my%20db?tls=true", "my db"],
    ["mongodb://svc:pa@ss@db.example.com:27017/x", "x"],
  ])("the database of %p is %p", (uri, name) => {
    expect(uriDatabase(uri)).toBe(name);
  });

  test("list filters by collection, prefix range and cursor; a zero limit reads nothing", () => {
    expect(listFilter("t", {})).toEqual({ collection: "t" });
    expect(listFilter("t", { prefix: "a/", after: "a/1", limit: 5 })).toEqual({
      collection: "t",
      id: { $gte: "a/", $lt: "a/\u{10FFFF}", $gt: "a/1" },
    });
    expect(listFilter("t", { limit: 0 })).toBeNull();
  });

  test("the newest row of each document wins, whatever the order rows come in", () => {
    const rows = [
      { collection: "t", id: "a", seq: 3 },
      { collection: "t", id: "a", seq: 9 },
      { collection: "u", id: "a", seq: 1 },
      { collection: "t", id: "a", seq: 5 },
    ];
    const newest = newestRows(rows);
    expect(newest.get(docKey("t", "a"))!.seq).toBe(9);
    expect(newest.get(docKey("u", "a"))!.seq).toBe(1);
    expect(newest.size).toBe(2);
  });

  test("a long body splits into pieces that join back exactly, never inside a surrogate pair", () => {
    const text = "ab😀cd😀😀e";
    for (const size of [2, 3, 4, 5, 100]) {
      const parts = splitText(text, size);
      expect(parts.join("")).toBe(text);
      for (const part of parts) {
        expect(part.length).toBeLessThanOrEqual(size);
        // Each piece is well-formed UTF-16: it survives UTF-8 (what BSON stores).
        expect(new TextDecoder().decode(new TextEncoder().encode(part))).toBe(part);
      }
    }
    expect(splitText("", 3)).toEqual([]);
    expect(() => splitText(text, 1)).toThrow(RangeError);
  });

  test("the audit filter keeps the bounds, actor, action and cursor the contract names", () => {
    expect(auditFilter({ limit: 10 })).toEqual({});
    expect(auditFilter({ limit: 10, from: "2026-01-01", to: "2026-02-01", actor: "sa:a", action: "x.y", before: "0190" })).toEqual({
      time: { $gte: "2026-01-01", $lt: "2026-02-01" },
      actor: "sa:a",
      action: "x.y",
      _id: { $lt: "0190" },
    });
    expect(auditFilter({ limit: 1, to: "2026-02-01" })).toEqual({ time: { $lt: "2026-02-01" } });
  });

  test("a log entry maps to the write's changes, deletes as version 0; a malformed one to nothing", () => {
    const changes: Change[] = [
      { collection: "t", id: "a", version: 3, op: "put" },
      { collection: "t", id: "b", version: 0, op: "delete" },
    ];
    expect(changesText(changes)).toBe('[["t","a",3],["t","b",0]]');
    expect(changesOf({ _id: "w", c: changesText(changes) })).toEqual(changes);
    expect(changesOf({ _id: "w", c: "[]" })).toEqual([]);
    expect(changesOf(undefined)).toBeNull();
    expect(changesOf({ c: '[["t","a",1]]' })).toBeNull();
    expect(changesOf({ _id: "w", c: '[["t","a"]]' })).toBeNull();
    expect(changesOf({ _id: "w", c: '[["t",1,1]]' })).toBeNull();
    expect(changesOf({ _id: "w", c: "[[" })).toBeNull();
  });

  test("errors are told apart: outage, duplicate key, anything else", async () => {
    const client = new MongoClient(`mongodb://127.0.0.1:${closedPort()}/x`, { serverSelectionTimeoutMS: 200 });
    const selection = await client
      .db()
      .command({ ping: 1 })
      .catch((error: unknown) => error);
    await client.close();
    expect(isConnectionError(selection)).toBe(true);
    expect(isDuplicateKey(selection)).toBe(false);
    const steppedDown = new MongoServerError({ ok: 0, code: 189, codeName: "PrimarySteppedDown", errmsg: "stepped down" });
    expect(isConnectionError(steppedDown)).toBe(true);
    const duplicate = new MongoServerError({ ok: 0, code: 11000, codeName: "DuplicateKey", errmsg: "E11000 duplicate key" });
    expect(isConnectionError(duplicate)).toBe(false);
    expect(isDuplicateKey(duplicate)).toBe(true);
    const notImplemented = new MongoServerError({ ok: 0, code: 238, codeName: "NotImplemented", errmsg: "not implemented yet" });
    expect(isConnectionError(notImplemented)).toBe(false);
    expect(isDuplicateKey(notImplemented)).toBe(false);
    expect(isConnectionError(new Error("x"))).toBe(false);
    // A mongodb+srv:// name that does not resolve (yet): the driver passes the DNS error on as it is.
    const srv = new MongoClient("mongodb+srv://db.nonexistent-svc-test.invalid/svc", { serverSelectionTimeoutMS: 200 });
    const lookup = await srv.connect().catch((error: unknown) => error);
    await srv.close();
    expect(isConnectionError(lookup)).toBe(true);
  }, 20_000);
});

describe("external store plumbing", () => {
  test("backoff doubles from the minimum to the cap, jittered over the upper half", () => {
    const bounds = { minMs: 100, maxMs: 1000 };
    expect(backoffDelay(0, bounds, 0)).toBe(50);
    expect(backoffDelay(0, bounds, 1)).toBe(100);
    expect(backoffDelay(2, bounds, 1)).toBe(400);
    expect(backoffDelay(10, bounds, 0)).toBe(500);
    expect(backoffDelay(10, bounds, 1)).toBe(1000);
  });

  test("watchers: a failing listener does not stop the others; unsubscribe and resync", () => {
    const watchers = new Watchers();
    const seen: Change[] = [];
    let resyncs = 0;
    const original = console.error;
    console.error = () => {};
    try {
      watchers.add(() => {
        throw new Error("boom");
      });
      const stop = watchers.add(
        (changes) => seen.push(...changes),
        () => resyncs++,
      );
      const change: Change = { collection: "t", id: "a", version: 1, op: "put" };
      watchers.emit([change]);
      watchers.resync();
      stop();
      watchers.emit([change]);
      watchers.resync();
      expect(seen).toEqual([change]);
      expect(resyncs).toBe(1);
    } finally {
      console.error = original;
    }
  });

  test("echoes: arrival, cancel and release resolve true; silence resolves false after the timeout", async () => {
    const echoes = new Echoes(30);
    const a = echoes.expect("a");
    const b = echoes.expect("b");
    const c = echoes.expect("c");
    const d = echoes.expect("d");
    echoes.arrived("a");
    b.cancel();
    echoes.releaseAll();
    expect(await Promise.all([a.wait, b.wait, c.wait, d.wait])).toEqual([true, true, true, true]);
    expect(await echoes.expect("e").wait).toBe(false);
  });
});

describe("MongoDB store: while nothing answers", () => {
  test("connect returns at once; operations throw StorageUnavailableError; it keeps retrying until closed", async () => {
    const retries: number[] = [];
    const { store, ready } = MongoStore.connect(`mongodb://127.0.0.1:${closedPort()}/svc`, {
      connectionTimeout: 0.2,
      backoff: { minMs: 10, maxMs: 20 },
      onRetry: (_error, delayMs) => retries.push(delayMs),
    });
    const outcome = ready.then(
      () => "opened",
      (error: Error) => error.message,
    );
    expect(store.backend).toBe("mongodb");
    await expect(store.get("t", "a")).rejects.toBeInstanceOf(StorageUnavailableError);
    await expect(store.write([{ op: "put", collection: "t", id: "a", data: 1 }])).rejects.toBeInstanceOf(StorageUnavailableError);
    await expect(store.ping()).rejects.toBeInstanceOf(StorageUnavailableError);
    for (let i = 0; i < 200 && retries.length < 2; i++) await Bun.sleep(20);
    expect(retries.length).toBeGreaterThanOrEqual(2);
    await expect(store.list("t")).rejects.toThrow(/not reachable yet: .*ECONNREFUSED/);
    await store.close();
    expect(await outcome).toMatch(/closed before it could open/);
    await expect(store.get("t", "a")).rejects.toThrow(/closed/);
  }, 20_000);

  test("open fails when the server cannot be reached", async () => {
    await expect(MongoStore.open(`mongodb://127.0.0.1:${closedPort()}/svc`, { connectionTimeout: 0.2 })).rejects.toThrow(/ECONNREFUSED/);
  });
});

/** The URI with its path naming `database` (query kept). */
function withDatabase(uri: string, database: string): string {
  const [base, query] = uri.split("?", 2) as [string, string | undefined];
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(base)![0];
  const rest = base.slice(scheme.length);
  const at = rest.lastIndexOf("@");
  const slash = rest.indexOf("/", at + 1);
  const authority = slash < 0 ? rest : rest.slice(0, slash);
  return `${scheme}${authority}/${database}${query ? `?${query}` : ""}`;
}

function auditEntry(action: string): AuditEntry {
  return {
    id: Bun.randomUUIDv7(),
    time: new Date().toISOString(),
    actor: "sa:test",
    action,
    resource: "collector",
    resourceId: "c1",
    outcome: "success",
    details: {},
    remoteAddr: "127.0.0.1",
  };
}

/** Maintenance at once and often: every delay of the log's upkeep at 0. */
const EAGER: MongoStoreOptions = {
  timings: { maintainMs: 50, supersededMs: 0, retentionMs: 0, orphanMs: 0, tombstoneMs: 0 },
};

/**
 * The contract and the log's own tests against the server at `server()`
 * (known once its beforeAll ran). `dropAfter`: drop this run's databases after
 * (not for a server whose data goes with it).
 */
function serverSuite(name: string, server: () => string, dropAfter: boolean): void {
  // A describe of its own: its afterAll runs before that of the describe starting the server.
  describe(name, () => serverTests(name, server, dropAfter));
}

function serverTests(name: string, server: () => string, dropAfter: boolean): void {
  const run = `svc_test_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  let admin: MongoClient;
  const created = new Set<string>();
  const uriFor = (suffix: string) => {
    created.add(`${run}_${suffix}`);
    return withDatabase(server(), `${run}_${suffix}`);
  };
  const raw = (suffix: string) => admin.db(`${run}_${suffix}`);

  beforeAll(async () => {
    admin = new MongoClient(server(), { serverSelectionTimeoutMS: 5000 });
    await admin.db("admin").command({ ping: 1 });
  });

  afterAll(async () => {
    if (dropAfter)
      for (const name of created)
        await admin
          ?.db(name)
          .dropDatabase()
          .catch(() => {});
    await admin?.close(true);
  });

  let contractRuns = 0;
  storeContract(`mongodb on ${name}`, {
    // A database per test: the contract's tests expect an empty store.
    open: async () => MongoStore.open(uriFor(`contract${++contractRuns}`)),
    reopen: async () => MongoStore.open(uriFor(`contract${contractRuns}`)),
    second: async () => MongoStore.open(uriFor(`contract${contractRuns}`)),
  });

  test("a newer or older schema is refused; the database name comes from the URI, else the option", async () => {
    const uri = uriFor("schema");
    const store = await MongoStore.open(uri);
    await store.write([{ op: "put", collection: "t", id: "a", data: 1 }]);
    await store.close();
    const named = await MongoStore.open(withDatabase(server(), ""), { database: `${run}_schema` });
    expect((await named.get("t", "a"))!.data).toBe(1);
    await named.close();
    const meta = raw("schema").collection<{ _id: string; version: number }>("meta");
    await meta.updateOne({ _id: "schema" }, { $set: { version: 999 } });
    await expect(MongoStore.open(uri)).rejects.toThrow(/schema version 999, newer than this server knows/);
    await meta.updateOne({ _id: "schema" }, { $set: { version: 1 } });
    await expect(MongoStore.open(uri)).rejects.toThrow(/schema version 1, an earlier layout this server does not read/);
  });

  test("compare-and-swap holds for four replicas incrementing one counter", async () => {
    const uri = uriFor("counter");
    const stores = await Promise.all([0, 1, 2, 3].map(() => MongoStore.open(uri)));
    try {
      await stores[0]!.write([{ op: "put", collection: "t", id: "n", data: 0 }]);
      const increment = async (store: MongoStore) => {
        for (;;) {
          const doc = (await store.get<number>("t", "n"))!;
          try {
            await store.write([{ op: "put", collection: "t", id: "n", data: doc.data + 1, expect: doc.version }]);
            return;
          } catch (error) {
            expect(error).toBeInstanceOf(ConflictError);
          }
        }
      };
      await Promise.all(stores.flatMap((store) => [0, 1, 2, 3, 4].map(() => increment(store))));
      const final = (await stores[3]!.get<number>("t", "n"))!;
      // FerretDB's own filtered update loses increments here; the log loses none.
      expect(final.data).toBe(20);
      expect(final.version).toBe(21);
    } finally {
      for (const store of stores) await store.close();
    }
  }, 60_000);

  test("an entry committed by a writer that stopped before applying it is applied whole by the next reader and at open", async () => {
    const uri = uriFor("crash");
    const store = await MongoStore.open(uri);
    const seen: Change[] = [];
    store.watch((changes) => seen.push(...changes));
    try {
      await store.write([{ op: "put", collection: "t", id: "a", data: { n: 1 } }]);
      const log = raw("crash").collection<LogRecord>("log");
      const [newest] = await log.find().sort({ _id: -1 }).limit(1).toArray();
      const seq = Number(newest!._id) + 1;
      const iso = new Date().toISOString();
      const entry = auditEntry("collector.update");
      const body: EntryBody = {
        rows: [
          ["t", "a", 2, JSON.stringify({ n: 2 }), iso],
          ["t", "b", 1, JSON.stringify("new"), iso],
        ],
        audit: [entry],
        prev: [rowId("t", "a", seq - 1)],
      };
      // What another replica left after its commit and before applying it: the entry alone.
      await log.insertOne({
        _id: seqId(seq),
        token: "stopped-writer",
        at: new Date(),
        c: '[["t","a",2],["t","b",1]]',
        body: JSON.stringify(body),
        applied: false,
      });
      expect((await store.get("t", "a"))!).toMatchObject({ version: 2, data: { n: 2 } });
      expect((await store.get("t", "b"))!.data).toBe("new");
      expect(await store.queryAudit({ limit: 10 })).toEqual([entry]);
      expect(seen.map((c) => `${c.id}@${c.version}`)).toEqual(["a@1", "a@2", "b@1"]);
      expect((await log.findOne({ _id: seqId(seq) }))!.applied).toBe(true);

      // Again, with nothing open: a replica that opens applies it before it answers anything.
      await log.insertOne({
        _id: seqId(seq + 1),
        token: "stopped-writer-2",
        at: new Date(),
        c: '[["t","b",0]]',
        body: JSON.stringify({ rows: [["t", "b", 0, null, iso]], audit: [], prev: [rowId("t", "b", seq)] } satisfies EntryBody),
        applied: false,
      });
      await store.close();
      const again = await MongoStore.open(uri);
      expect((await log.findOne({ _id: seqId(seq + 1) }))!.applied).toBe(true);
      expect(await again.get("t", "b")).toBeNull();
      expect((await again.list("t")).map((d) => d.id)).toEqual(["a"]);
      await again.close();
    } finally {
      await store.close();
    }
  }, 30_000);

  test("a batch too large for one document goes in chunks and round-trips exactly", async () => {
    const store = await MongoStore.open(uriFor("large"));
    try {
      // Past the 2,000,000 characters an entry holds itself, with pairs of surrogates across every boundary.
      const big = "😀".repeat(400_000) + "x";
      const ops = ["a", "b", "c"].map((id) => ({ op: "put" as const, collection: "t", id, data: { id, big } }));
      await store.write(ops, [auditEntry("config.publish")]);
      for (const id of ["a", "b", "c"]) expect((await store.get<{ id: string; big: string }>("t", id))!.data).toEqual({ id, big });
      const entry = await raw("large")
        .collection<LogRecord>("log")
        .findOne({ chunks: { $gt: 1 } });
      expect(entry!.chunks).toBeGreaterThan(1);
      expect(entry!.body).toBeUndefined();
    } finally {
      await store.close();
    }
  }, 60_000);

  test("maintenance removes superseded rows, deleted documents, old entries (never the newest) and chunks of writes that never committed", async () => {
    const uri = uriFor("upkeep");
    const store = await MongoStore.open(uri, EAGER);
    let resyncs = 0;
    store.watch(
      () => {},
      () => resyncs++,
    );
    const db = raw("upkeep");
    const rowsOf = (id: string) => db.collection("docs").countDocuments({ id });
    try {
      await store.write([{ op: "put", collection: "t", id: "a", data: 1 }]);
      await store.write([{ op: "put", collection: "t", id: "a", data: 2 }]);
      await store.write([{ op: "put", collection: "t", id: "b", data: 1 }]);
      await store.write([{ op: "delete", collection: "t", id: "b" }]);
      await until(async () => (await rowsOf("a")) === 1 && (await rowsOf("b")) === 0, 20_000, 20, "one row of a and none of b");
      expect((await store.get("t", "a"))!).toMatchObject({ version: 2, data: 2 });
      expect(await store.get("t", "b")).toBeNull();
      const log = db.collection<LogRecord>("log");
      await until(async () => (await log.countDocuments({})) === 1, 20_000, 20, "the log down to its newest entry");
      const [newest] = await log.find().toArray();

      // A writer that stored its chunks and stopped before its commit: its number is taken from it, its chunks removed.
      const seq = Number(newest!._id) + 1;
      await db.collection("chunks").insertOne({ _id: "gone/0" as never, token: "gone", seq, i: 0, text: "{", at: new Date(0) });
      await until(async () => (await db.collection("chunks").countDocuments({})) === 0, 20_000, 20, "the orphaned chunk removed");
      expect(await log.findOne({ _id: seqId(seq) })).toMatchObject({ void: true, applied: true });
      await store.write([{ op: "put", collection: "t", id: "c", data: 1 }]);
      expect((await store.get("t", "c"))!.version).toBe(1);
      expect(resyncs).toBe(0);
    } finally {
      await store.close();
    }
  }, 30_000);

  test("a replica that missed entries (removed before it read them) resyncs its watchers", async () => {
    const uri = uriFor("gap");
    const store = await MongoStore.open(uri);
    let resyncs = 0;
    const seen: Change[] = [];
    store.watch(
      (changes) => seen.push(...changes),
      () => resyncs++,
    );
    try {
      await store.write([{ op: "put", collection: "t", id: "a", data: 1 }]);
      expect(seen).toEqual([{ collection: "t", id: "a", version: 1, op: "put", data: 1 }]);
      // Another replica's entry numbered past one this replica never read.
      const log = raw("gap").collection<LogRecord>("log");
      const [newest] = await log.find().sort({ _id: -1 }).limit(1).toArray();
      const body: EntryBody = { rows: [["t", "b", 1, "1", new Date().toISOString()]], audit: [], prev: [] };
      await log.insertOne({
        _id: seqId(Number(newest!._id) + 2),
        token: "other",
        at: new Date(),
        c: '[["t","b",1]]',
        body: JSON.stringify(body),
        applied: true,
      });
      await store.sync();
      expect(resyncs).toBe(1);
      expect(seen.map((c) => c.id)).toEqual(["a", "b"]);
    } finally {
      await store.close();
    }
  }, 20_000);
}

describe("MongoDB store against FerretDB 1.24.2 (SQLite)", () => {
  let ferret: FerretDBServer | undefined;
  beforeAll(async () => {
    ferret = await startFerretDB();
  });
  afterAll(async () => {
    await ferret?.stop();
  });
  serverSuite("FerretDB", () => ferret!.uri, false);

  // What the adapter does without, as FerretDB answers it (README "External database").
  // Its filtered updates are not atomic either (internal/handler/msg_update.go reads,
  // then internal/backends/*/collection.go UpdateAll writes by _id), which a test cannot show every time.
  test("FerretDB refuses transactions, change streams, TTL indexes and nested arrays; a unique key holds", async () => {
    const client = new MongoClient(ferret!.uri, { serverSelectionTimeoutMS: 5000 });
    try {
      const db = client.db(`svc_limits_${Date.now().toString(36)}`);
      const t = db.collection<{ _id: string; c?: unknown }>("t");
      const refusal = (promise: Promise<unknown>) =>
        promise.then(
          () => "accepted",
          (error: MongoServerError) => `${error.code}: ${error.message}`,
        );
      const transaction = refusal(client.withSession((session) => session.withTransaction(() => t.insertOne({ _id: "x" }, { session }))));
      expect(await transaction).toBe('9: insert: unknown field "autocommit"');
      expect(await t.findOne({ _id: "x" })).toBeNull();
      expect(await refusal(t.watch().tryNext())).toBe('238: `aggregate` stage "$changeStream" is not implemented yet');
      expect(await refusal(t.createIndex({ at: 1 }, { expireAfterSeconds: 60 }))).toBe('238: Index option "expireAfterSeconds" is not implemented yet');
      expect(await refusal(t.insertOne({ _id: "n", c: [["a", 1]] }))).toMatch(/^2: .*nested arrays are not supported/);
      await t.insertOne({ _id: "once" });
      const again = await t.insertOne({ _id: "once" }).catch((error: unknown) => error);
      expect(isDuplicateKey(again)).toBe(true);
    } finally {
      await client.close();
    }
  });
});

describe.skipIf(!SERVER)("MongoDB store against SVC_TEST_MONGODB_URI", () => {
  serverSuite("MongoDB", () => SERVER, true);
});
