/**
 * The coalesced writer: one document that cannot be written (here, nested
 * too deep for JSON.stringify) fails its own callers only; the rest of its
 * batch is stored. Given what an in-memory view holds, it writes without
 * reading, and a view that lags costs a retry from the store, never a lost update.
 */
import { describe, expect, spyOn, test } from "bun:test";
import pino from "pino";
import { Coalescer } from "./coalesce.ts";
import { SqliteStore } from "./sqlite.ts";

function nested(depth: number): unknown {
  let value: unknown = "bottom";
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

describe("Coalescer", () => {
  test("a document that fails its write is refused alone; the others of its batch are stored", async () => {
    const store = new SqliteStore(":memory:");
    const writes = new Coalescer<{ value: unknown }>(store, "things", 1_000, pino({ level: "silent" }));
    const good = ["a", "b", "c"].map((id) => writes.update(id, () => ({ value: id })));
    const bad = writes.update("poison", () => ({ value: nested(50_000) }));
    const throwing = writes.update("thrower", () => {
      throw new Error("this update cannot be computed");
    });
    const settled = Promise.allSettled([...good, bad, throwing]);
    await writes.flush();
    const outcomes = (await settled).map((r) => r.status);
    expect(outcomes).toEqual(["fulfilled", "fulfilled", "fulfilled", "rejected", "rejected"]);
    for (const id of ["a", "b", "c"]) expect((await store.get<{ value: unknown }>("things", id))?.data).toEqual({ value: id });
    expect(await store.get("things", "poison")).toBeNull();
    expect(await store.get("things", "thrower")).toBeNull();
    await store.close();
  });

  test("documents an in-memory view holds are written without a read; one it holds at an old version is read and updated as stored", async () => {
    const store = new SqliteStore(":memory:");
    await store.write([
      { op: "put", collection: "things", id: "a", data: { n: 1 } },
      { op: "put", collection: "things", id: "b", data: { n: 1 } },
    ]);
    const held = new Map((await store.list<{ n: number }>("things")).map((d) => [d.id, { version: d.version, data: d.data }]));
    const writes = new Coalescer<{ n: number }>(store, "things", 1_000, pino({ level: "silent" }), (id) => held.get(id));
    const getMany = spyOn(store, "getMany");
    const bump = (doc: { n: number } | null) => doc && { n: doc.n + 1 };
    const done = Promise.all([writes.update("a", bump), writes.update("b", bump)]);
    await writes.flush();
    await done;
    expect(getMany).not.toHaveBeenCalled();
    expect((await store.get<{ n: number }>("things", "a"))?.data).toEqual({ n: 2 });

    // "a" moved on elsewhere (another replica, say) while the view still holds version 1 of it.
    await store.write([{ op: "put", collection: "things", id: "a", data: { n: 10 } }]);
    const again = writes.update("a", bump);
    await writes.flush();
    await again;
    expect(getMany).toHaveBeenCalledTimes(1);
    expect((await store.get<{ n: number }>("things", "a"))?.data).toEqual({ n: 11 });
    await store.close();
  });
});
