/**
 * The direction of dependencies, checked on the source against the layer
 * table (layers.ts): every folder has a layer, every import points where the
 * table allows, no two folders import each other through any chain, no module
 * imports itself through others, and no dynamic import hides its path. Every
 * import counts, type-only ones too: a type cycle is still two modules that
 * cannot be understood apart. planted.test.ts proves each check fails on a
 * copy of this tree with one bad import planted.
 */
import { expect, test } from "bun:test";
import { resolve } from "node:path";
import { checkStructure, servedByServer } from "./check.ts";
import { computedImportsOf, cyclesOf, importsOf, scan } from "./scan.ts";

const ROOT = resolve(import.meta.dir, "../..");
const scanned = scan(ROOT);
const report = checkStructure(ROOT, scanned);

test("the scan sees what it checks: every import form, computed paths, and the cycle it would report", () => {
  const source = [
    'import type { A } from "./a.ts";',
    'import { b } from "../b.ts";',
    'export { c } from "./c.ts";',
    'export type { D } from "./d.ts";',
    'const e = await import("./e.ts");',
    'import "pino";',
    "const f = await import(`./${name}.ts`);",
    "const g = await import(path);",
  ].join("\n");
  expect(importsOf(source)).toEqual(["./a.ts", "../b.ts", "./c.ts", "./d.ts", "./e.ts"]);
  expect(computedImportsOf(source, "x.ts")).toEqual(["import(`./${name}.ts`)", "import(path)"]);
  const withCycle = new Map([
    ["a", ["b"]],
    ["b", ["c"]],
    ["c", ["a"]],
    ["d", ["a"]],
    ["e", ["e"]],
  ]);
  expect(cyclesOf(withCycle)).toEqual([["a", "b", "c"], ["e"]]);
  const { graph } = scanned;
  expect(graph.get("server/http/server.ts")).toContain("server/auth/tokens.ts");
  expect(graph.get("server/catalog/index.ts")).toContain("server/catalog/types.ts");
  expect(servedByServer(ROOT)).toContain("server/ui/serve.ts");
});

test("every folder has a layer in the table, and every entry of the table names modules", () => {
  expect(report.unassigned).toEqual([]);
  expect(report.stale).toEqual([]);
});

test("every import points where the layer table allows", () => {
  expect(report.wrong).toEqual([]);
});

test("no folder-level cycle: no two folders reach each other through any chain of imports", () => {
  expect(report.cycles).toEqual([]);
});

test("no module imports itself through a chain of others", () => {
  expect(cyclesOf(scanned.graph)).toEqual([]);
});

test("no dynamic import with a computed path: every dependency can be read", () => {
  expect(report.computed).toEqual([]);
});
