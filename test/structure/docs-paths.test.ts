/**
 * The docs name files that exist. docs/architecture.md names modules by path:
 * from the repository root (`server/rollout/delivery.ts`), from server/
 * (`rollout/delivery.ts`) or from the folder its sentence is about
 * (`upstream/tables.ts` in the catalog's row); shared/README.md and
 * agent/README.md name their own folder's modules, often by file name alone.
 * A file moved or deleted without its sentence leaves a name that no longer
 * exists: this lists them. Placeholders (`<type>.ts`), URL paths (`/v1/opamp`)
 * and built files (`test/peers/bin/…`, no extension) are not names of source
 * files and are left out.
 */
import { expect, test } from "bun:test";
import { Glob } from "bun";
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "../..");

/** Backticked names that look like a repository file or folder: a path or file name ending in an extension, or a folder ending in `/`. */
function namedPaths(markdown: string): string[] {
  const names = new Set<string>();
  for (const [, name] of markdown.matchAll(/`([^`\n]+)`/g)) {
    if (/[<>{}*…:\s]/.test(name!) || name!.startsWith("/") || name!.startsWith("../")) continue;
    if (/^[\w.-]+(\/[\w.-]+)*(\.(tsx?|json|sh|md|yaml)|\/)$/.test(name!)) names.add(name!);
  }
  return [...names].sort();
}

/** Every file under `folder`, relative to it. */
const filesUnder = (folder: string) => [...new Glob("**/*").scanSync({ cwd: join(ROOT, folder) })];

/** Whether `name` is a path from the root or from one of `bases`, or the tail of the path of a file under `within`. */
function exists(name: string, bases: readonly string[], within: readonly string[]): boolean {
  const path = name.replace(/\/$/, "");
  return bases.some((base) => existsSync(join(ROOT, base, path))) || within.some((file) => `/${file}`.endsWith(`/${path}`) || `/${file}`.includes(`/${path}/`));
}

const read = (doc: string) => readFileSync(join(ROOT, doc), "utf8");

test("the names a doc is read for are the ones checked", () => {
  const names = namedPaths(
    "`server/rollout/delivery.ts` `rollout/retarget.ts` `agent/` `<type>.ts` `/v1/opamp` `ws://` `test/peers/bin/ferretdb` `RUNTIME_NAMES` `config.yaml`",
  );
  expect(names).toEqual(["agent/", "config.yaml", "rollout/retarget.ts", "server/rollout/delivery.ts"]);
  expect(exists("upstream/tables.ts", ["."], ["catalog/upstream/tables.ts"])).toBe(true);
  expect(exists("upstream/gone.ts", ["."], ["catalog/upstream/tables.ts"])).toBe(false);
});

test("every repository path docs/architecture.md names exists", () => {
  const names = namedPaths(read("docs/architecture.md")).filter((name) => name.includes("/"));
  expect(names).toContain("test/structure/layers.ts");
  const server = filesUnder("server");
  expect(names.filter((name) => !exists(name, [".", "server"], server))).toEqual([]);
});

test("every module shared/README.md and agent/README.md name is in their folder", () => {
  for (const folder of ["shared", "agent"]) {
    const names = namedPaths(read(`${folder}/README.md`));
    expect(names.length).toBeGreaterThan(5);
    const below = filesUnder(folder);
    expect({ folder, missing: names.filter((name) => !exists(name, [".", folder], below)) }).toEqual({ folder, missing: [] });
  }
});
