/** The registry against a real SQLite store: who hears of attribute changes, and edits refused before they are written. */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { SYSTEM_ACTOR } from "../audit/audit.ts";
import { ConflictError } from "../errors.ts";
import { SqliteStore } from "../store/sqlite.ts";
import { Collectors, type CollectorEdit } from "./collectors.ts";

let store: SqliteStore;
let collectors: Collectors;
let heard: string[][];

beforeEach(() => {
  store = new SqliteStore(":memory:");
  collectors = new Collectors(store);
  heard = [];
  collectors.onAttributesChanged((ids) => heard.push(ids));
});
afterEach(async () => {
  collectors.close();
  await store.close();
});

test("writes that change what a render reads are heard once each; writes that change nothing, and deletes, are not", async () => {
  const a = await collectors.create(SYSTEM_ACTOR, { name: "a" });
  expect(heard).toEqual([[a.id]]);
  await collectors.update(SYSTEM_ACTOR, a.id, { environment: "prod" });
  expect(await collectors.report(SYSTEM_ACTOR, a.id, { region: "eu" })).toBe(true);
  expect(await collectors.report(SYSTEM_ACTOR, a.id, { region: "eu" })).toBe(false);
  expect(heard).toEqual([[a.id], [a.id], [a.id]]);
  await collectors.delete(SYSTEM_ACTOR, a.id);
  expect(heard).toHaveLength(3);
});

test("a bulk tag edit is heard once per written chunk, naming only the collectors it changed", async () => {
  const made = [];
  for (let i = 0; i < 501; i++) made.push(await collectors.create(SYSTEM_ACTOR, { name: `c${i}`, tags: i === 0 ? { team: "x" } : {} }));
  heard = [];
  const result = await collectors.editTags(SYSTEM_ACTOR, () => true, { set: { team: "x" }, remove: [] }, {});
  expect(result).toEqual({ matched: 501, changed: 500 });
  expect(heard.map((ids) => ids.length)).toEqual([500]);
  expect(heard.flat().sort()).toEqual(
    made
      .slice(1)
      .map((c) => c.id)
      .sort(),
  );
  await collectors.editTags(SYSTEM_ACTOR, () => true, { set: {}, remove: ["team"] }, {});
  expect(heard.slice(1).map((ids) => ids.length)).toEqual([500, 1]);
});

test("vet sees each collector as it is and as the write would leave it, and refusing writes nothing", async () => {
  const a = await collectors.create(SYSTEM_ACTOR, { name: "a", tags: { keep: "1" } });
  heard = [];
  const seen: CollectorEdit[] = [];
  const refuse = async (edits: CollectorEdit[]) => {
    seen.push(...edits);
    throw new ConflictError("no", "refused");
  };
  await expect(collectors.editTags(SYSTEM_ACTOR, () => true, { set: { team: "x" }, remove: [] }, {}, refuse)).rejects.toThrow("no");
  await expect(collectors.update(SYSTEM_ACTOR, a.id, { managementMode: "rcfg-remotecfg" }, refuse)).rejects.toThrow("no");
  await expect(collectors.create(SYSTEM_ACTOR, { name: "b" }, refuse)).rejects.toThrow("no");
  expect(seen).toMatchObject([
    { before: { tags: { keep: "1" } }, after: { tags: { keep: "1", team: "x" } } },
    { before: { managementMode: "opamp" }, after: { managementMode: "rcfg-remotecfg" } },
    { before: null, after: { name: "b" } },
  ]);
  expect(await collectors.get(a.id)).toMatchObject({ managementMode: "opamp", tags: { keep: "1" } });
  expect((await collectors.all()).map((c) => c.name)).toEqual(["a"]);
  expect(heard).toEqual([]);
});
