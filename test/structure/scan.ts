/**
 * Reading a source tree's imports: every module under the scanned folders of a
 * root directory, what each imports (statically or dynamically, type-only or
 * not, re-exports included), and the dynamic imports whose path is computed
 * and so cannot be read at all. The real tree and the planted copies of it
 * (planted.test.ts) are read by the same code.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";

/** The folders whose modules are checked, relative to the root. */
export const SCANNED = ["server", "agent", "shared"];

/** Relative specifiers a module imports, statically or dynamically, type-only or not, re-exports included. */
export function importsOf(source: string): string[] {
  return ts
    .preProcessFile(source, true, true)
    .importedFiles.map((i) => i.fileName)
    .filter((name) => name.startsWith("."));
}

/** The text of each `import(…)` whose argument is not a literal: a dependency no reader can follow. */
export function computedImportsOf(source: string, fileName: string): string[] {
  // Parsing is the scan's cost; a module without `import(` has no dynamic import to read.
  if (!/\bimport\s*\(/.test(source)) return [];
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, false, fileName.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const [argument] = node.arguments;
      if (argument === undefined || !ts.isStringLiteralLike(argument)) found.push(node.getText(file));
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

function modulesUnder(root: string, dir: string): string[] {
  const found: string[] = [];
  // Sorted: the directory's own order differs between file systems, and reports are compared whole.
  const entries = readdirSync(join(root, dir), { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1));
  for (const entry of entries) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory()) found.push(...modulesUnder(root, path));
    else if (/\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name)) found.push(path);
  }
  return found;
}

export interface Scan {
  /** Every scanned module → the scanned modules it imports (root-relative paths). */
  graph: Map<string, string[]>;
  /** `module: import(…)` for each dynamic import with a computed path. */
  computed: string[];
  /** The files imported as text or data (install.sh, templates, package.json): not modules, but read to prove they exist. */
  assets: Set<string>;
}

export function scan(root: string): Scan {
  const modules = SCANNED.filter((dir) => existsSync(join(root, dir))).flatMap((dir) => modulesUnder(root, dir));
  const known = new Set(modules);
  const graph = new Map<string, string[]>();
  const computed: string[] = [];
  const assets = new Set<string>();
  for (const module of modules) {
    const source = readFileSync(join(root, module), "utf8");
    const targets: string[] = [];
    for (const specifier of importsOf(source)) {
      const target = relative(root, resolve(root, dirname(module), specifier));
      if (known.has(target)) targets.push(target);
      // A .ts import that resolves to nothing, or an asset that is not there, would be a blind spot.
      else if (/\.tsx?$/.test(target) || !existsSync(join(root, target))) throw new Error(`${module}: cannot resolve ${specifier}`);
      else assets.add(target);
    }
    graph.set(module, targets);
    computed.push(...computedImportsOf(source, module).map((text) => `${module}: ${text}`));
  }
  return { graph, computed, assets };
}

/** Each cycle (its nodes, sorted) in `graph`: the strongly connected components of more than one node, or of one importing itself. */
export function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
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
