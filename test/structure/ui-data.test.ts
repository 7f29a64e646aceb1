/**
 * The UI's one data layer: reads go through useLoad (server/ui/load.ts), which
 * drops a late answer to an older read, and writes through useAction
 * (server/ui/action.ts), which keeps busy and the refusal. A page that guards
 * its own fetch with a `current` flag, or keeps its own busy flag, has copied
 * one of them by hand; this names where.
 */
import { expect, test } from "bun:test";
import { Glob } from "bun";
import { join } from "node:path";

const UI = join(import.meta.dir, "../../server/ui");
const HOOKS = new Set(["load.ts", "action.ts"]);
const PATTERNS: [string, RegExp][] = [
  ["a stale-answer guard (use useLoad)", /\blet (current|live|alive|cancelled) = true\b/],
  ["a busy flag set by hand (use useAction)", /\bset(Busy|Saving|Pending|Working|Loading)\(true\)/],
];

test("no UI module copies the load or busy/error pattern of useLoad and useAction", async () => {
  const found: string[] = [];
  for await (const path of new Glob("**/*.{ts,tsx}").scan(UI)) {
    if (HOOKS.has(path) || path.endsWith(".test.ts")) continue;
    const lines = (await Bun.file(join(UI, path)).text()).split("\n");
    lines.forEach((line, i) => {
      for (const [what, pattern] of PATTERNS) if (pattern.test(line)) found.push(`server/ui/${path}:${i + 1}: ${what}`);
    });
  }
  expect(found).toEqual([]);
});
