import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConflictError } from "../errors.ts";
import { SqliteStore } from "./sqlite.ts";
import type { Change } from "./store.ts";

const dir = mkdtempSync(join(tmpdir(), "svc-sqlite-writer-"));
let n = 0;
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const open = () => new SqliteStore(join(dir, `${n++}/state.db`), { writes: "thread" });

test("writes asked for together commit together, each atomic on its own: a refused one takes nothing of the others", async () => {
  const store = open();
  const seen: Change[] = [];
  store.watch((changes) => seen.push(...changes));
  await store.write([{ op: "put", collection: "t", id: "a", data: 0 }]);
  // Asked for in one turn: one batch on the writer thread.
  const writes = Array.from({ length: 50 }, (_, i) =>
    store
      .write(
        i % 10 === 3
          ? [
              { op: "put", collection: "t", id: `ok-${i}`, data: i },
              { op: "put", collection: "t", id: "a", data: i, expect: 99 },
            ]
          : [{ op: "put", collection: "t", id: "a", data: i }],
      )
      .then(
        (docs) => docs,
        (error: unknown) => error,
      ),
  );
  const outcomes = await Promise.all(writes);
  const refused = outcomes.filter((o) => o instanceof ConflictError);
  expect(refused).toHaveLength(5);
  // Versions follow the order the writes were asked for, refused ones taking none.
  const versions = outcomes.flatMap((o) => (Array.isArray(o) ? o.map((d) => d.version) : []));
  expect(versions).toEqual(Array.from({ length: 45 }, (_, i) => i + 2));
  expect((await store.get("t", "a"))!).toMatchObject({ version: 46, data: 49 });
  // A refused write's other document is not stored, and the feed never told of it.
  expect(await store.get("t", "ok-3")).toBeNull();
  expect(seen.filter((c) => c.id.startsWith("ok-"))).toEqual([]);
  expect(seen.map((c) => c.version)).toEqual(Array.from({ length: 46 }, (_, i) => i + 1));
  await store.close();
});

test("a write is told to its listeners and readable on the server's connection once it resolves; close waits for writes in flight", async () => {
  const store = open();
  const pending = Array.from({ length: 20 }, (_, i) => store.write([{ op: "put", collection: "t", id: String(i), data: { i } }]));
  const closing = store.close();
  const docs = await Promise.all(pending);
  expect(docs.map(([d]) => d!.version)).toEqual(Array(20).fill(1));
  await closing;
  const again = new SqliteStore(store.path);
  expect(await again.count("t")).toBe(20);
  await again.close();
});

test("a write after close is refused", async () => {
  const store = open();
  await store.close();
  expect(
    await store.write([{ op: "put", collection: "t", id: "a", data: 1 }]).then(
      () => null,
      (error: Error) => error.message,
    ),
  ).toMatch(/closed/);
});
