/**
 * The coalesced writer: one document that cannot be written (here, nested
 * too deep for JSON.stringify) fails its own callers only; the rest of its
 * batch is stored.
 */
import { describe, expect, test } from "bun:test";
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
});
