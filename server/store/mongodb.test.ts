/**
 * The MongoDB adapter. The Store contract and the feed tests need a real
 * MongoDB replica set (or a compatible server with transactions) and run only
 * when SVC_TEST_MONGODB_URI names one, e.g. mongodb://127.0.0.1:27017/?replicaSet=rs0;
 * each run uses databases of its own and drops them after. CI has no
 * MongoDB, so there only the always-run tests below do: the pure parts, and
 * the store's behaviour while nothing answers at the address.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { MongoClient, MongoServerError } from "mongodb";
import { StorageUnavailableError } from "../errors.ts";
import { storeContract } from "./contract.ts";
import { backoffDelay, Echoes, Watchers } from "./external.ts";
import {
  auditFilter,
  changesOf,
  docKey,
  isConnectionError,
  isNoTransactions,
  listQuery,
  MongoStore,
  type MongoStoreOptions,
  pollStep,
  uriDatabase,
} from "./mongodb.ts";
import type { Change } from "./store.ts";

const SERVER = process.env.SVC_TEST_MONGODB_URI ?? "";

/** A port nothing listens on: connections are refused at once. */
function closedPort(): number {
  const server = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = server.port;
  server.stop(true);
  return port;
}

describe("MongoDB store: pure parts", () => {
  test("document keys are the JSON text of [collection, id]: unique, NUL-free, reversible", () => {
    expect(docKey("t", "a")).toBe('["t","a"]');
    expect(docKey("a\u0000b", "c")).not.toContain("\u0000");
    expect(docKey("a", "b/c")).not.toBe(docKey("a/b", "c"));
    expect(docKey('x"', "y")).not.toBe(docKey("x", '"y'));
    expect(JSON.parse(docKey("ü/☃", "id 1"))).toEqual(["ü/☃", "id 1"]);
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
    expect(listQuery("t", {})).toEqual({ filter: { collection: "t" }, limit: 0 });
    expect(listQuery("t", { prefix: "a/", after: "a/1", limit: 5 })).toEqual({
      filter: { collection: "t", id: { $gte: "a/", $lt: "a/\u{10FFFF}", $gt: "a/1" } },
      limit: 5,
    });
    expect(listQuery("t", { limit: 0 })).toBeNull();
  });

  test("the audit filter keeps the bounds, actor, action and cursor the contract names", () => {
    expect(auditFilter({ limit: 10 })).toEqual({});
    expect(
      auditFilter({ limit: 10, from: "2026-01-01", to: "2026-02-01", actor: "sa:a", action: "x.y", before: "0190" }),
    ).toEqual({ time: { $gte: "2026-01-01", $lt: "2026-02-01" }, actor: "sa:a", action: "x.y", _id: { $lt: "0190" } });
    expect(auditFilter({ limit: 1, to: "2026-02-01" })).toEqual({ time: { $lt: "2026-02-01" } });
  });

  test("a change record maps to the write's changes, deletes as version 0; a malformed one to nothing", () => {
    expect(changesOf({ _id: "w", c: [["t", "a", 3], ["t", "b", 0]], at: new Date() })).toEqual([
      { collection: "t", id: "a", version: 3, op: "put" },
      { collection: "t", id: "b", version: 0, op: "delete" },
    ]);
    expect(changesOf({ _id: "w", c: [] })).toEqual([]);
    expect(changesOf(undefined)).toBeNull();
    expect(changesOf({ c: [["t", "a", 1]] })).toBeNull();
    expect(changesOf({ _id: "w", c: [["t", "a"]] as never })).toBeNull();
    expect(changesOf({ _id: "w", c: [["t", 1, 1]] as never })).toBeNull();
  });

  test("polling advances over consecutive numbers and finds a gap where records were missed", () => {
    expect(pollStep(4, [])).toEqual({ last: 4, gap: false });
    expect(pollStep(4, [{ seq: 5 }, { seq: 6 }])).toEqual({ last: 6, gap: false });
    expect(pollStep(4, [{ seq: 7 }, { seq: 8 }])).toEqual({ last: 8, gap: true });
    expect(pollStep(4, [{ seq: 5 }, { seq: 7 }])).toEqual({ last: 7, gap: true });
    // Already delivered numbers are skipped, not counted as a gap.
    expect(pollStep(6, [{ seq: 6 }, { seq: 7 }])).toEqual({ last: 7, gap: false });
  });

  test("errors are told apart: outage, no transactions, anything else", async () => {
    const client = new MongoClient(`mongodb://127.0.0.1:${closedPort()}/x`, { serverSelectionTimeoutMS: 200 });
    const selection = await client.db().command({ ping: 1 }).catch((error: unknown) => error);
    await client.close();
    expect(isConnectionError(selection)).toBe(true);
    const standalone = new MongoServerError({
      ok: 0,
      code: 20,
      codeName: "IllegalOperation",
      errmsg: "Transaction numbers are only allowed on a replica set member or mongos",
    });
    expect(isNoTransactions(standalone)).toBe(true);
    expect(isConnectionError(standalone)).toBe(false);
    const steppedDown = new MongoServerError({ ok: 0, code: 189, codeName: "PrimarySteppedDown", errmsg: "stepped down" });
    expect(isConnectionError(steppedDown)).toBe(true);
    expect(isNoTransactions(steppedDown)).toBe(false);
    const duplicate = new MongoServerError({ ok: 0, code: 11000, codeName: "DuplicateKey", errmsg: "E11000 duplicate key" });
    expect(isConnectionError(duplicate)).toBe(false);
    expect(isNoTransactions(duplicate)).toBe(false);
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
    await expect(MongoStore.open(`mongodb://127.0.0.1:${closedPort()}/svc`, { connectionTimeout: 0.2 })).rejects.toThrow(
      /ECONNREFUSED/,
    );
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

describe.skipIf(!SERVER)("MongoDB store against SVC_TEST_MONGODB_URI", () => {
  const run = `svc_test_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
  let admin: MongoClient;
  const created = new Set<string>();
  const uriFor = (suffix: string) => {
    created.add(`${run}_${suffix}`);
    return withDatabase(SERVER, `${run}_${suffix}`);
  };

  beforeAll(async () => {
    admin = new MongoClient(SERVER, { serverSelectionTimeoutMS: 5000 });
    await admin.db("admin").command({ ping: 1 });
  });

  afterAll(async () => {
    for (const name of created) await admin?.db(name).dropDatabase().catch(() => {});
    await admin?.close();
  });

  for (const changeFeed of ["auto", "poll"] as const) {
    // Built when a test runs: this body runs (to list the skipped tests) without a server too.
    const uri = () => uriFor(`contract_${changeFeed}`);
    const options: MongoStoreOptions = { changeFeed };
    storeContract(`mongodb (${changeFeed === "auto" ? "change stream" : "polling"})`, {
      open: async () => {
        const store = await MongoStore.open(uri(), options);
        const db = admin.db(`${run}_contract_${changeFeed}`);
        await db.collection("docs").deleteMany({});
        await db.collection("audit").deleteMany({});
        return store;
      },
      reopen: async () => MongoStore.open(uri(), options),
      second: async () => MongoStore.open(uri(), options),
    });
  }

  test("the feed mode follows what the server offers, or polling when asked", async () => {
    const uri = uriFor("mode");
    const auto = await MongoStore.open(uri);
    const poll = await MongoStore.open(uri, { changeFeed: "poll" });
    try {
      expect(["stream", "poll"]).toContain(auto.feedMode!);
      expect(poll.feedMode).toBe("poll");
    } finally {
      await auto.close();
      await poll.close();
    }
  });

  test("a newer schema is refused; the database name comes from the URI, else the option", async () => {
    const uri = uriFor("schema");
    const store = await MongoStore.open(uri);
    await store.write([{ op: "put", collection: "t", id: "a", data: 1 }]);
    await store.close();
    const named = await MongoStore.open(withDatabase(SERVER, ""), { database: `${run}_schema` });
    expect((await named.get("t", "a"))!.data).toBe(1);
    await named.close();
    await admin.db(`${run}_schema`).collection("meta").updateOne({ _id: "schema" as never }, { $set: { version: 999 } });
    await expect(MongoStore.open(uri)).rejects.toThrow(/schema version 999, newer than this server knows/);
  });

  test("a polling replica that missed records (expired) resyncs its watchers", async () => {
    const uri = uriFor("gap");
    const store = await MongoStore.open(uri, { changeFeed: "poll" });
    let resyncs = 0;
    const seen: Change[] = [];
    store.watch(
      (changes) => seen.push(...changes),
      () => resyncs++,
    );
    try {
      await store.write([{ op: "put", collection: "t", id: "a", data: 1 }]);
      expect(seen).toEqual([{ collection: "t", id: "a", version: 1, op: "put" }]);
      // Another replica's write whose record expired before this one polled: the numbers skip one.
      const db = admin.db(`${run}_gap`);
      await db.collection("meta").updateOne({ _id: "seq" as never }, { $inc: { n: 2 } });
      const { n } = (await db.collection("meta").findOne({ _id: "seq" as never }))!;
      await db.collection("changes").insertOne({ _id: "other" as never, c: [["t", "b", 1]], at: new Date(), seq: n });
      for (let i = 0; i < 250 && resyncs === 0; i++) await Bun.sleep(20);
      expect(resyncs).toBe(1);
      expect(seen.map((c) => c.id)).toEqual(["a", "b"]);
    } finally {
      await store.close();
    }
  }, 20_000);
});
