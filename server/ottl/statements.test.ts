/**
 * Transform statements (parseStatement / checkStatement): `editor(arguments) where
 * condition`, each argument checked against server/ottl/editors.ts, the condition as
 * parseCondition checks it, errors with the 1-based column.
 */
import { describe, expect, test } from "bun:test";
import type { StatementContext } from "./contexts.ts";
import { EDITORS } from "./editors.ts";
import { checkStatement, parseStatement } from "./parser.ts";

const check = (source: string, context: StatementContext = "log") => checkStatement(source, context);

describe("statements that load in the collector parse", () => {
  test.each([
    ['set(attributes["env"], "prod")', "log"],
    ['set(attributes["copy"], resource.attributes["host.name"]) where severity_number >= SEVERITY_NUMBER_WARN', "log"],
    ['set(attributes["is_json"], IsMatch(body, "^\\\\{"))', "log"],
    ['delete_key(attributes, "password")', "log"],
    ['delete_matching_keys(attributes, "^tmp\\\\.")', "span"],
    ['keep_keys(attributes, ["service.name", "host.name"])', "resource"],
    ["keep_keys(attributes, [])", "resource"],
    ['limit(attributes, 10, ["http.route"])', "datapoint"],
    ['limit(attributes, 2, ["a", "b"])', "log"],
    ["limit(attributes, 0, [])", "log"],
    ["truncate_all(attributes, 0)", "log"],
    ["truncate_all(attributes, 256)", "spanevent"],
    ['merge_maps(attributes, resource.attributes, "insert")', "log"],
    ['replace_pattern(body, "password=\\\\S+", "password=***")', "log"],
    ['replace_all_patterns(attributes, "value", "\\\\d{4}", "****")', "log"],
    ['replace_match(name, "GET /user/*", "GET /user/{id}")', "span"],
    ['replace_all_matches(attributes, "*/secret", "redacted")', "datapoint"],
    // gobwas/glob v0.2.3 compiles these: braces and a trailing backslash never fail.
    ['replace_match(body, "{a,b", "x")', "log"],
    ['replace_match(body, "a\\x5c", "x")', "log"],
    ['replace_match(body, "[!a-z][\\\\]]x", "x")', "log"],
    ['set(version, "2") where name == "app"', "scope"],
    ["set(time_unix_nano, observed_time_unix_nano) where time_unix_nano == 0", "log"],
    ['set(attributes["trace"], trace_id.string) where flags == 1 and dropped_attributes_count == 0 and span_id.string != ""', "log"],
  ] as const)("%s (%s)", (source, context) => {
    expect(check(source, context)).toBeNull();
  });

  test("the tree holds the editor, its arguments (lists too) and the condition", () => {
    expect(parseStatement('keep_keys(attributes, ["a", "b"]) where attributes["a"] != nil', "log")).toEqual({
      editor: "keep_keys",
      args: [
        { kind: "path", fields: ["attributes"], keys: [] },
        { kind: "list", items: ["a", "b"] },
      ],
      where: { kind: "compare", op: "!=", left: { kind: "path", fields: ["attributes"], keys: ["a"] }, right: { kind: "literal", value: null } },
    });
  });

  test("every editor in the table has at least a target", () => {
    for (const [name, params] of Object.entries(EDITORS))
      expect({ name, first: params[0]![1] === "target" || params[0]![1] === "map" }).toEqual({ name, first: true });
  });
});

describe("what is refused, with the column", () => {
  test.each([
    ["", "log", "column 1: the statement is empty"],
    ['attributes["a"] == "b"', "log", "column 1: expected an editor call such as set(...), found 'attributes'"],
    ["drop()", "log", expect.stringContaining("column 1: 'drop' is not an editor svc checks; statements can call set, delete_key")],
    ['set(attributes["a"])', "log", "column 1: set takes 2 arguments (target, value), got 1"],
    ['set(attributes["a"], "b", "c")', "log", "column 27: set takes 2 arguments (target, value); optional ones are not supported"],
    ['set("a", "b")', "log", "column 5: the target of set must be a path"],
    ['delete_key(severity_text, "a")', "log", "column 12: the target of delete_key must be a map, such as attributes; severity_text is not one"],
    ["delete_key(attributes, 5)", "log", "column 24: the key of delete_key must be a string"],
    ['keep_keys(attributes, "a")', "log", 'column 23: the keys of keep_keys must be a list of strings, e.g. ["a", "b"]'],
    ['keep_keys(attributes, ["a", 1])', "log", "column 29: expected a string, found '1'"],
    ['limit(attributes, "10", [])', "log", "column 19: the limit of limit must be an integer"],
    ['replace_pattern(body, "(", "x")', "log", "column 24: invalid pattern: missing closing ')'"],
    ['replace_all_patterns(attributes, "value", "(?<=a)", "x")', "log", "column 44: invalid pattern: lookbehind (?<= and (?<! is not supported by RE2"],
    // Refused by upstream when the statement is built (func_limit.go, func_truncate_all.go).
    ["limit(attributes, -1, [])", "log", "column 19: the limit of limit must not be negative"],
    ['limit(attributes, 1, ["a", "b"])', "log", "column 19: the limit of limit must be at least the number of priority_keys (2), got 1"],
    ["truncate_all(attributes, -1)", "log", "column 26: the limit of truncate_all must not be negative"],
    // gobwas/glob Compile's errors, at the offending character.
    ['replace_match(body, "[", "x")', "log", "column 23: invalid glob pattern: unexpected end of input: a '[' range is not closed with ']'"],
    ['replace_all_matches(attributes, "a[", "x")', "log", "column 36: invalid glob pattern: unexpected end of input: a '[' range is not closed with ']'"],
    ['replace_match(body, "x[z-a]", "x")', "log", "column 24: invalid glob pattern: hi character 'a' should be greater than lo 'z'"],
    ['replace_match(body, "[a-bc]", "x")', "log", "column 26: invalid glob pattern: expected close range character: a range [a-z] holds one lo-hi pair"],
    ['replace_match(body, "[]", "x")', "log", "column 22: invalid glob pattern: could not parse range: a range needs characters or lo-hi"],
    [
      'replace_match(body, "a\\x00b", "x")',
      "log",
      "column 23: invalid glob pattern: a NUL character would end the pattern there (gobwas/glob reads it as the end of input)",
    ],
    ['replace_pattern(body, "\\q", "x")', "log", "column 24: '\\q' is not a valid escape in a string"],
    ['replace_all_patterns(attributes, "values", "a", "b")', "log", 'column 34: the mode of replace_all_patterns must be one of "key", "value"'],
    ['merge_maps(attributes, resource.attributes, "replace")', "log", 'column 45: the strategy of merge_maps must be one of "insert", "update", "upsert"'],
    ['set(attributes["a"], Concat("a", ""))', "log", expect.stringContaining("column 22: unknown function 'Concat'")],
    ['set(body, "x")', "resource", expect.stringContaining("column 5: unknown path 'body' in the resource context")],
    ['set(severity_text, "x") where', "log", "column 30: 'where' needs a condition after it"],
    ['set(severity_text, "x") where severity_number > 3 extra', "log", "column 51: expected 'and', 'or' or the end of the statement, found 'extra'"],
    ['set(severity_text, "x") when true', "log", "column 25: expected 'where' or the end of the statement, found 'when'"],
    ['set(attributes["a"], "b"))', "log", "column 26: ')' has no matching '('"],
  ] as const)("%s (%s)", (source, context, message) => {
    expect(check(source, context)).toEqual(message as never);
  });
});
