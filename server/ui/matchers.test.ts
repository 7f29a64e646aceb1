import { expect, test } from "bun:test";
import { MAX_MATCHER_PROGRAM, matches, parseMatcher } from "../../shared/matchers.ts";
import { matcherProblem, selectionMatchers } from "./matchers.ts";

test("a matcher's problem names its column; a good one has none", () => {
  expect(matcherProblem('region=~"us-.*"')).toBeNull();
  expect(matcherProblem("env=")).toEqual({ column: 5, message: "column 5: unexpected end of input; expected a value" });
  expect(matcherProblem("=x")?.column).toBe(1);
  expect(matcherProblem('env=~"("')?.message).toContain("invalid regular expression");
});

test("selection matchers stay under the API's length and select exactly the ids, whatever their characters", () => {
  const awkward = ["a.b", "x|y", 'q"uote', "back\\slash", "(paren)", "^$*+?[]{}", "new\nline", "ünï"];
  const ids = [...Array.from({ length: 300 }, (_, i) => `0193a0c4-7d2e-7000-8000-${String(i).padStart(12, "0")}`), ...awkward];
  const out = selectionMatchers(ids, 200);
  expect(out.length).toBeGreaterThan(1);
  for (const { match } of out) expect(match.length).toBeLessThanOrEqual(200);
  expect(out.flatMap((c) => c.ids)).toEqual(ids);
  for (const { match, ids: chunk } of out) for (const id of chunk) expect(matches([parseMatcher(match)], { "collector.id": id })).toBe(true);
  const parsed = out.map((c) => parseMatcher(c.match));
  const selects = (id: string) => parsed.some((m) => matches([m], { "collector.id": id }));
  for (const id of ids) expect(selects(id)).toBe(true);
  for (const other of ["ab", "a-b", "x", "y", "quote", "0193a0c4-7d2e-7000-8000-00000000030", "0193a0c4-7d2e-7000-8000-000000000001x", ""])
    expect(selects(other)).toBe(false);
  expect(selectionMatchers([])).toEqual([]);
  expect(() => selectionMatchers(["x".repeat(300)], 200)).toThrow(RangeError);
});

test("selection matchers of UUIDs at the API's length stay within its RE2 program cap, so none is refused", () => {
  const ids = Array.from({ length: 500 }, () => crypto.randomUUID());
  const out = selectionMatchers(ids);
  expect(out.flatMap((c) => c.ids)).toEqual(ids);
  for (const { match } of out) expect(parseMatcher(match).program).toBeLessThanOrEqual(MAX_MATCHER_PROGRAM);
});
