/** TargetDelivery against a real SQLite store: what a listener of onTargetChanged hears, and what it reads then. */
import { afterEach, beforeEach, expect, spyOn, test } from "bun:test";
import pino from "pino";
import { Collectors } from "../collectors/collectors.ts";
import { SqliteStore } from "../store/sqlite.ts";
import type { RenderedConfig } from "./renderer.ts";
import type { Store } from "../store/store.ts";
import { CONFIGS, HISTORY, historyId, RENDERED, type CollectorConfig } from "./records.ts";
import { storedRendered } from "./stored-rendered.ts";
import { TargetDelivery } from "./target-delivery.ts";

let store: SqliteStore;
let delivery: TargetDelivery;

beforeEach(() => {
  store = new SqliteStore(":memory:");
  delivery = new TargetDelivery(store, new Collectors(store), { open: async () => "" }, pino({ level: "silent" }));
});
afterEach(async () => {
  await delivery.close();
  await store.close();
});

/** Stores a rendered config and makes it the collector's target, as a publish on any replica would. */
async function retarget(collectorId: string, hash: string, seq: number): Promise<void> {
  const rendered: RenderedConfig = { hash, runtime: "otelcol", contentType: "text/yaml", body: `# ${hash}\n` };
  const target = { collectorId, targetHash: hash, targetCommit: "c", targetSeq: seq, state: "outdated", error: null, updatedAt: "" };
  await store.write([
    { op: "put", collection: RENDERED, id: hash, data: rendered },
    { op: "put", collection: "collector_config", id: collectorId, data: target },
  ]);
}

test("a listener hears of a changed target after the cached one is dropped, so it reads the new one; unsubscribed, it hears nothing", async () => {
  await retarget("c1", "h1", 1);
  expect((await delivery.target("c1"))?.rendered.hash).toBe("h1");
  const heard: { id: string | undefined; hash: string | undefined }[] = [];
  let read = Promise.resolve();
  const off = delivery.onTargetChanged((id) => {
    read = delivery.target(id!).then((t) => void heard.push({ id, hash: t?.rendered.hash }));
  });
  await retarget("c1", "h2", 2);
  await read;
  expect(heard).toEqual([{ id: "c1", hash: "h2" }]);
  expect((await storedRendered(store, "h2"))?.body).toBe("# h2\n");

  off();
  await retarget("c1", "h3", 3);
  await read;
  expect(heard).toHaveLength(1);
});

/** `store` as another replica's writes reach a watcher: announced without their documents. */
function asAnotherReplica(inner: Store): Store {
  const remote = Object.create(inner) as Store;
  remote.watch = (listener, onResync) =>
    inner.watch(
      (changes, at) =>
        listener(
          changes.map(({ data: _, ...change }) => change),
          at,
        ),
      onResync,
    );
  return remote;
}

/** Counts the store's reads of targets from here on. */
function countTargetReads(inner: Store): { reads: number } {
  const get = spyOn(inner, "get");
  const getMany = spyOn(inner, "getMany");
  return {
    get reads() {
      return [...get.mock.calls, ...getMany.mock.calls].filter(([collection]) => collection === CONFIGS).length;
    },
  };
}

async function until(what: string, ok: () => boolean, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(5);
  }
}

test("a state change reaches listeners as offer unchanged and a publish as changed, with no read of the target", async () => {
  await retarget("c1", "h1", 1);
  expect((await delivery.targetOf("c1"))?.state).toBe("outdated");
  const heard: [string | undefined, boolean][] = [];
  delivery.onTargetChanged((id, offerChanged) => heard.push([id, offerChanged]));
  const count = countTargetReads(store);
  await delivery.fetched("c1", "h1");
  expect(heard).toEqual([["c1", false]]);
  // What the feed carried is what is served: applying, from memory.
  expect((await delivery.targetOf("c1"))?.state).toBe("applying");
  await retarget("c1", "h2", 2);
  expect(heard).toEqual([
    ["c1", false],
    ["c1", true],
  ]);
  expect((await delivery.targetOf("c1"))?.targetHash).toBe("h2");
  // The coalescer read the target it updated (fetched); nothing else read one.
  expect(count.reads).toBe(1);
});

test("another replica's change: a cached target is read again once and listeners told whether its offer changed; an uncached one is told changed", async () => {
  const remote = new TargetDelivery(asAnotherReplica(store), new Collectors(store), { open: async () => "" }, pino({ level: "silent" }));
  try {
    await retarget("c1", "h1", 1);
    expect((await remote.targetOf("c1"))?.state).toBe("outdated");
    const heard: [string | undefined, boolean][] = [];
    remote.onTargetChanged((id, offerChanged) => heard.push([id, offerChanged]));
    const count = countTargetReads(store);
    const target = (await store.get<CollectorConfig>(CONFIGS, "c1"))!.data;
    await store.write([{ op: "put", collection: CONFIGS, id: "c1", data: { ...target, state: "applying" } }]);
    await until("the state change to be told", () => heard.length === 1);
    expect(heard).toEqual([["c1", false]]);
    expect((await remote.targetOf("c1"))?.state).toBe("applying");
    await retarget("c1", "h2", 2);
    await until("the publish to be told", () => heard.length === 2);
    expect(heard[1]).toEqual(["c1", true]);
    expect((await remote.targetOf("c1"))?.targetHash).toBe("h2");
    // One read each (the test's own get counted too), none by targetOf.
    expect(count.reads).toBe(3);
    await retarget("c2", "h1", 1);
    expect(heard[2]).toEqual(["c2", true]);
  } finally {
    await remote.close();
  }
});

test("a rendered config rewritten in place (the secrets upgrade taking a plaintext out) is read again, not served from memory", async () => {
  await retarget("c1", "h1", 1);
  expect((await delivery.target("c1"))?.rendered.body).toBe("# h1\n");
  const rewritten: RenderedConfig = { hash: "h1", runtime: "otelcol", contentType: "text/yaml", body: "# h1, rewritten\n" };
  await store.write([{ op: "put", collection: RENDERED, id: "h1", data: rewritten }]);
  await Bun.sleep(50);
  expect((await delivery.target("c1"))?.rendered.body).toBe("# h1, rewritten\n");
});

test("a status an agent repeats on every poll reads and writes nothing once the target and its history entry hold it; a new target is read again", async () => {
  await retarget("c1", "h1", 1);
  await store.write([
    { op: "put", collection: HISTORY, id: historyId("c1", 1), data: { seq: 1, commit: "c", hash: "h1", time: "", state: "applying", actor: "user:a" } },
  ]);
  await delivery.targetOf("c1");
  await delivery.report("c1", { hash: "h1", state: "applied" });
  expect((await delivery.targetOf("c1"))?.state).toBe("current");
  expect((await store.get<{ state: string }>(HISTORY, historyId("c1", 1)))?.data.state).toBe("current");
  // The first repeat confirms both from the store (one read each); later repeats touch nothing.
  await delivery.report("c1", { hash: "h1", state: "applied" });
  const get = spyOn(store, "get");
  const getMany = spyOn(store, "getMany");
  const list = spyOn(store, "list");
  const write = spyOn(store, "write");
  for (let i = 0; i < 5; i++) await delivery.report("c1", { hash: "h1", state: "applied" });
  expect([get.mock.calls.length, getMany.mock.calls.length, list.mock.calls.length, write.mock.calls.length]).toEqual([0, 0, 0, 0]);
  // A write that keeps the state (a drift verdict) keeps the repeats in memory.
  const judged = (await delivery.targetOf("c1"))!;
  write.mockRestore();
  await store.write([
    { op: "put", collection: CONFIGS, id: "c1", data: { ...judged, drift: { drifted: false, diff: null, reason: null, targetHash: "h1", checkedAt: "" } } },
  ]);
  const reads = getMany.mock.calls.length + get.mock.calls.length;
  await delivery.report("c1", { hash: "h1", state: "applied" });
  expect(getMany.mock.calls.length + get.mock.calls.length).toBe(reads);
  // A failed report is not taken from memory: it moves the state.
  await delivery.report("c1", { hash: "h1", state: "failed", error: "bad" });
  expect((await delivery.targetOf("c1"))?.state).toBe("failed");
  // A new target is another object: its first report goes to the store again.
  await retarget("c1", "h2", 2);
  await delivery.report("c1", { hash: "h2", state: "applied" });
  expect((await delivery.targetOf("c1"))?.state).toBe("current");
});

test("an older config reported while the target is not sent yet is stale, decided without reading history; once applying, it is a rollback", async () => {
  await retarget("c1", "h1", 1);
  await store.write([
    { op: "put", collection: HISTORY, id: historyId("c1", 1), data: { seq: 1, commit: "c", hash: "h1", time: "", state: "current", actor: "a" } },
  ]);
  await retarget("c1", "h2", 2);
  await store.write([
    { op: "put", collection: HISTORY, id: historyId("c1", 2), data: { seq: 2, commit: "c", hash: "h2", time: "", state: "outdated", actor: "a" } },
  ]);
  await delivery.targetOf("c1");
  const list = spyOn(store, "list");
  for (let i = 0; i < 3; i++) await delivery.report("c1", { hash: "h1", state: "applied" });
  expect(list).not.toHaveBeenCalled();
  expect((await delivery.targetOf("c1"))?.state).toBe("outdated");
  // Sent (applying: still being written, so memory says outdated), then the collector says it runs h1 again: it went back on its own.
  const sending = delivery.fetched("c1", "h2");
  await delivery.report("c1", { hash: "h1", state: "applied" });
  await sending;
  expect(await delivery.targetOf("c1")).toMatchObject({ state: "failed", collectorRollback: { toSeq: 1, toHash: "h1" } });
  list.mockRestore();
});
