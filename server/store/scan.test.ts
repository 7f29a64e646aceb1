import { expect, test } from "bun:test";
import { readMany, scan } from "./scan.ts";
import { SqliteStore } from "./sqlite.ts";

test("scan reads a collection in id order across pages; readMany finds the ids asked for that exist, across pages", async () => {
  const store = new SqliteStore(":memory:");
  const ids = Array.from({ length: 1_203 }, (_, i) => `doc-${String(i).padStart(5, "0")}`);
  await store.write(ids.map((id) => ({ op: "put", collection: "c", id, data: { id } })));
  await store.write([{ op: "put", collection: "other", id: "x", data: {} }]);
  const seen: string[] = [];
  for await (const doc of scan<{ id: string }>(store, "c")) seen.push(doc.data.id);
  expect(seen).toEqual(ids);
  const after: string[] = [];
  for await (const doc of scan(store, "c", ids[1_000])) after.push(doc.id);
  expect(after).toEqual(ids.slice(1_001));
  const asked = [...ids.filter((_, i) => i % 3 === 0), "missing-1", "missing-2"];
  const found = await readMany<{ id: string }>(store, "c", asked);
  expect([...found.keys()].sort()).toEqual(ids.filter((_, i) => i % 3 === 0));
  expect(found.get(ids[999]!)?.data.id).toBe(ids[999]);
  await store.close();
});
