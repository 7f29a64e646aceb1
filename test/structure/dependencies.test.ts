/**
 * The direction of dependencies, checked on the source: domain modules do not
 * import the edge (`server/http/`, `server/api/`, `server/ui/`) or the assembly
 * (`server/app.ts`, `server/main.ts`), which only the entry point imports; `http/` does not
 * import `api/`; the agent does not import the server; `shared/` imports only
 * `shared/`; the browser UI imports only itself and `shared/`; and no module
 * imports itself through a chain of others. Every
 * import counts, type-only ones too: a type cycle is still two modules that
 * cannot be understood apart.
 */
import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";

const ROOT = resolve(import.meta.dir, "../..");
const SCANNED = ["server", "agent", "shared"];

const ASSEMBLY = new Set(["server/app.ts", "server/main.ts"]);
const EDGE = /^server\/(http|api|ui)\//;
/** The modules under server/ui/ that build and serve the UI run in the server: the UI's tsconfig leaves them out. */
const UI_SERVED_BY_SERVER = new Set(
  (ts.readConfigFile(join(ROOT, "server/ui/tsconfig.json"), ts.sys.readFile).config.exclude as string[])
    .filter((pattern) => !pattern.includes("*"))
    .map((file) => `server/ui/${file}`),
);

/** Relative specifiers a module imports, statically or dynamically, type-only or not, re-exports included. */
function importsOf(source: string): string[] {
  return ts
    .preProcessFile(source, true, true)
    .importedFiles.map((i) => i.fileName)
    .filter((name) => name.startsWith("."));
}

/** Each cycle (its modules, sorted) in `graph`: the strongly connected components of more than one module, or of one importing itself. */
function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v)!, index.get(w)!));
      }
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || graph.get(v)!.includes(v)) cycles.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return cycles;
}

function modulesUnder(dir: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) found.push(...modulesUnder(path));
    else if (/\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name)) found.push(path);
  }
  return found;
}

/** Every scanned module → the scanned modules it imports (repository-relative paths). */
function importGraph(): Map<string, string[]> {
  const modules = SCANNED.filter((dir) => existsSync(join(ROOT, dir))).flatMap(modulesUnder);
  const known = new Set(modules);
  const graph = new Map<string, string[]>();
  for (const module of modules) {
    const targets: string[] = [];
    for (const specifier of importsOf(readFileSync(join(ROOT, module), "utf8"))) {
      const target = relative(ROOT, resolve(ROOT, dirname(module), specifier));
      if (known.has(target)) targets.push(target);
      // Text assets (install.sh, templates, CSS) are not modules; a .ts import that resolves to nothing would be a blind spot.
      else if (/\.tsx?$/.test(target) || !existsSync(join(ROOT, target))) throw new Error(`${module}: cannot resolve ${specifier}`);
    }
    graph.set(module, targets);
  }
  return graph;
}

const graph = importGraph();

test("the scan sees what it checks: every import form, and the cycle it would report", () => {
  const source = [
    'import type { A } from "./a.ts";',
    'import { b } from "../b.ts";',
    'export { c } from "./c.ts";',
    'export type { D } from "./d.ts";',
    'const e = await import("./e.ts");',
    'import "pino";',
  ].join("\n");
  expect(importsOf(source)).toEqual(["./a.ts", "../b.ts", "./c.ts", "./d.ts", "./e.ts"]);
  const withCycle = new Map([
    ["a", ["b"]],
    ["b", ["c"]],
    ["c", ["a"]],
    ["d", ["a"]],
    ["e", ["e"]],
  ]);
  expect(cyclesOf(withCycle)).toEqual([["a", "b", "c"], ["e"]]);
  expect(graph.get("server/http/server.ts")).toContain("server/auth/tokens.ts");
  expect(graph.get("server/catalog/index.ts")).toContain("server/catalog/types.ts");
});

test("domain modules import neither the HTTP edge nor the assembly", () => {
  const wrong: string[] = [];
  for (const [from, targets] of graph) {
    if (EDGE.test(from) || ASSEMBLY.has(from) || !from.startsWith("server/")) continue;
    for (const to of targets) {
      if (EDGE.test(to) || ASSEMBLY.has(to)) wrong.push(`${from} → ${to}`);
    }
  }
  expect(wrong).toEqual([]);
});

test("the HTTP edge does not import the endpoints it serves: routes are handed to it", () => {
  const wrong = [...graph].flatMap(([from, targets]) =>
    from.startsWith("server/http/") ? targets.filter((to) => to.startsWith("server/api/")).map((to) => `${from} → ${to}`) : [],
  );
  expect(wrong).toEqual([]);
});

test("the agent does not import the server, and shared/ imports only shared/", () => {
  const wrong: string[] = [];
  for (const [from, targets] of graph) {
    for (const to of targets) {
      if ((from.startsWith("agent/") && to.startsWith("server/")) || (from.startsWith("shared/") && !to.startsWith("shared/"))) {
        wrong.push(`${from} → ${to}`);
      }
    }
  }
  expect(wrong).toEqual([]);
});

test("server/ui/ imports only server/ui/ and shared/: the browser UI cannot reach server internals", () => {
  expect(UI_SERVED_BY_SERVER).toContain("server/ui/serve.ts");
  const wrong = [...graph].flatMap(([from, targets]) =>
    from.startsWith("server/ui/") && !UI_SERVED_BY_SERVER.has(from)
      ? targets.filter((to) => !to.startsWith("server/ui/") && !to.startsWith("shared/")).map((to) => `${from} → ${to}`)
      : [],
  );
  expect(wrong).toEqual([]);
});

test("no import cycles, type-only imports included", () => {
  expect(cyclesOf(graph)).toEqual([]);
});

test("only the entry point imports the assembly: the edge, too, takes what it declares it uses, not App", () => {
  const wrong = [...graph].flatMap(([from, targets]) =>
    from === "server/main.ts" ? [] : targets.filter((to) => to === "server/app.ts").map((to) => `${from} → ${to}`),
  );
  expect(wrong).toEqual([]);
});
