/**
 * Each module names another in one import declaration: a second `import … from` of the
 * same path (a type import beside a value import included) is one import split in two,
 * which Biome's linter does not refuse, so this test does.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import ts from "typescript";

const ROOT = resolve(import.meta.dir, "../..");
const FOLDERS = ["server", "agent", "shared", "test", "bench", "scripts"];

/** The module paths `source` imports in more than one top-level import declaration. */
export function importedTwice(source: string, fileName: string): string[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, false, fileName.endsWith(".tsx") ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const seen = new Set<string>();
  const twice = new Set<string>();
  for (const statement of file.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    const path = statement.moduleSpecifier.text;
    if (seen.has(path)) twice.add(path);
    seen.add(path);
  }
  return [...twice];
}

test("a split import is found, a single one is not", () => {
  expect(importedTwice('import type { A } from "./a.ts";\nimport { b } from "./a.ts";\nimport { c } from "./c.ts";\n', "x.ts")).toEqual(["./a.ts"]);
  expect(importedTwice('import { type A, b } from "./a.ts";\nimport { c } from "./c.ts";\n', "x.ts")).toEqual([]);
});

test("no module imports another in two declarations", () => {
  const found: string[] = [];
  for (const folder of FOLDERS) {
    for (const path of new Bun.Glob("**/*.{ts,tsx}").scanSync({ cwd: join(ROOT, folder) })) {
      // Go peers, and the protobuf code buf generates (left as generated, as Biome leaves it).
      if (path.startsWith("peers/") || path.startsWith("gen/") || path.includes("node_modules/")) continue;
      const file = `${folder}/${path}`;
      for (const twice of importedTwice(readFileSync(join(ROOT, file), "utf8"), file)) found.push(`${file}: ${twice}`);
    }
  }
  expect(found).toEqual([]);
});
