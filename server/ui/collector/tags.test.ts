import { expect, test } from "bun:test";
import { ApiError } from "../api.ts";
import { parseTags, tagsText } from "./tags.ts";

test("tags round-trip through the text box, commas or newlines between pairs", () => {
  expect(parseTags(" team=payments,\nregion = eu ,")).toEqual({ team: "payments", region: "eu" });
  expect(parseTags(tagsText({ team: "payments", empty: "" }))).toEqual({ team: "payments", empty: "" });
  expect(parseTags("")).toEqual({});
});

test("a pair without a key is refused on the tags field", () => {
  for (const bad of ["team", "=eu"]) {
    let caught: unknown;
    try {
      parseTags(`a=b, ${bad}`);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ApiError);
    expect((caught as ApiError).details).toEqual([{ path: "tags", message: `"${bad}" is not key=value` }]);
  }
});
