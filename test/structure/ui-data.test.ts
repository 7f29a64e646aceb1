/**
 * The UI's one data layer: reads go through useLoad (server/ui/load.ts), which
 * drops a late answer to an older read, and writes through useAction
 * (server/ui/action.ts), which keeps busy and the refusal. A page that guards
 * its own fetch with a `current` flag, or keeps its own busy flag, has copied
 * one of them by hand; this names where.
 */
import { expect, test } from "bun:test";
import { type LineCheck, uiLinesFound } from "./ui-lines.ts";

const HOOKS = new Set(["load.ts", "action.ts"]);
const PATTERNS: LineCheck[] = [
  ["a stale-answer guard (use useLoad)", (line) => /\blet (current|live|alive|cancelled) = true\b/.test(line)],
  ["a busy flag set by hand (use useAction)", (line) => /\bset(Busy|Saving|Pending|Working|Loading)\(true\)/.test(line)],
];

test("no UI module copies the load or busy/error pattern of useLoad and useAction", async () => {
  expect(await uiLinesFound(PATTERNS, HOOKS)).toEqual([]);
});
