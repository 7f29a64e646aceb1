/**
 * globProblem against what gobwas/glob v0.2.3 Compile answers: each case below was run
 * through the Go library (and 20,000 random patterns over []!-\{},az*?é agreed).
 */
import { expect, test } from "bun:test";
import { globProblem } from "./glob.ts";

test.each([
  ["", undefined],
  ["*", undefined],
  ["**", undefined],
  ["{a", undefined],
  ["{a,{b}", undefined],
  ["a}", undefined],
  ["a\\", undefined],
  ["\\[", undefined],
  ["[ab-c]", undefined],
  ["[\\]]", undefined],
  ["[!a-z]", undefined],
  ["[-a]", undefined],
  ["[-]", undefined],
  ["[!!]", undefined],
  ["[a-a]", undefined],
  ["[", [1, "unexpected end of input"]],
  ["[\\", [2, "unexpected end of input"]],
  ["[\\]", [3, "unexpected end of input"]],
  ["[a-]", [4, "unexpected end of input"]],
  ["[--]", [4, "unexpected end of input"]],
  ["{a,[}", [5, "unexpected end of input"]],
  ["[]", [0, "could not parse range"]],
  ["[]]", [0, "could not parse range"]],
  ["x[!]", [1, "could not parse range"]],
  ["[z-a]", [1, "hi character 'a' should be greater than lo 'z'"]],
  ["[a--]", [1, "hi character '-' should be greater than lo 'a'"]],
  ["[é-a]", [1, "hi character 'a' should be greater than lo 'é'"]],
  ["[a-bc]", [4, "expected close range character"]],
  ["[a-z-]", [4, "expected close range character"]],
] as const)("%p", (pattern, expected) => {
  const problem = globProblem(pattern);
  if (expected === undefined) expect(problem).toBeUndefined();
  else expect(problem && [problem.offset, problem.reason.startsWith(expected[1])]).toEqual([expected[0], true]);
});
