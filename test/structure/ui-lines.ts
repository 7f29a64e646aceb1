/**
 * The browser UI's source read line by line, for the tests that refuse a pattern
 * written by hand where the UI has one place for it (ui-data, ui-client).
 */
import { Glob } from "bun";
import { join } from "node:path";

const UI = join(import.meta.dir, "../../server/ui");

/** What a check refuses, and whether a line has it. */
export type LineCheck = readonly [what: string, finds: (line: string) => boolean];

/** Every line of server/ui's modules (tests and `exempt` aside) that a check finds, as `server/ui/<path>:<line>: <what>`. */
export async function uiLinesFound(checks: readonly LineCheck[], exempt: ReadonlySet<string>): Promise<string[]> {
  const found: string[] = [];
  for await (const path of new Glob("**/*.{ts,tsx}").scan(UI)) {
    if (exempt.has(path) || path.endsWith(".test.ts")) continue;
    const lines = (await Bun.file(join(UI, path)).text()).split("\n");
    lines.forEach((line, i) => {
      for (const [what, finds] of checks) if (finds(line)) found.push(`server/ui/${path}:${i + 1}: ${what}`);
    });
  }
  return found;
}
