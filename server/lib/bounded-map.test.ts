import { describe, expect, test } from "bun:test";
import { BoundedMap } from "./bounded-map.ts";

describe("BoundedMap", () => {
  test("keeps at most its limit, dropping the oldest inserted; setting a held key keeps its place", () => {
    const map = new BoundedMap<string, number>(3);
    map.set("a", 1).set("b", 2).set("c", 3);
    map.set("a", 10);
    map.set("d", 4);
    expect(map.size).toBe(3);
    expect(map.has("a")).toBe(false);
    expect([map.get("b"), map.get("c"), map.get("d")]).toEqual([2, 3, 4]);
    map.set("e", 5);
    expect(map.has("b")).toBe(false);
    expect(map.size).toBe(3);
  });

  test("a key deleted and set again is the newest (a least-recently-used cache's touch); entries and values go oldest first", () => {
    const map = new BoundedMap<string, number>(3);
    map.set("a", 1).set("b", 2).set("c", 3);
    map.delete("a");
    map.set("a", 1);
    map.set("d", 4);
    expect([...map.entries()]).toEqual([
      ["c", 3],
      ["a", 1],
      ["d", 4],
    ]);
    expect([...map.values()]).toEqual([3, 1, 4]);
  });

  test("entries deleted or cleared meanwhile are not counted, and eviction goes on from the oldest left", () => {
    const map = new BoundedMap<number, number>(3);
    for (let i = 0; i < 3; i++) map.set(i, i);
    map.delete(1);
    map.set(3, 3);
    expect(map.size).toBe(3);
    map.set(4, 4);
    expect([...[0, 1, 2, 3, 4].filter((k) => map.has(k))]).toEqual([2, 3, 4]);
    map.clear();
    expect(map.size).toBe(0);
    for (let i = 10; i < 15; i++) map.set(i, i);
    expect([10, 11, 12, 13, 14].filter((k) => map.has(k))).toEqual([12, 13, 14]);
  });

  test("over many turns, with deletions between, it holds what a plain list of live keys, oldest dropped first, holds", () => {
    const map = new BoundedMap<number, number>(100);
    const model: number[] = [];
    for (let i = 0; i < 10_000; i++) {
      if (model.length >= 100) model.shift();
      model.push(i);
      map.set(i, i);
      if (i % 7 === 0) {
        map.delete(i - 50);
        if (model.includes(i - 50)) model.splice(model.indexOf(i - 50), 1);
      }
    }
    expect(map.size).toBe(model.length);
    for (const key of model) expect(map.get(key)).toBe(key);
  });
});
