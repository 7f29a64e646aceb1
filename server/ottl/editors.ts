/**
 * The OTTL editors a transform statement may call, with what each argument must be.
 * Read from the Arguments structs of pkg/ottl/ottlfuncs/func_<name>.go in
 * open-telemetry/opentelemetry-collector-contrib (the index's stored versions, 2026;
 * e.g. LimitArguments{Target PMapGetSetter, Limit int64, PriorityKeys []string},
 * replaceAllPatternsArguments{Target PMapGetSetter, Mode string, RegexPattern,
 * Replacement, Optional Function, Optional ReplacementFormat}). Only the required
 * arguments are taken: the optional ones name converters (SHA256, …) that the checker
 * does not know, so a statement passing them is refused rather than half-checked.
 *
 * Argument kinds: `target`, a path to write (a whole map too); `map`, a path holding
 * a map (`attributes`, `resource.attributes`); `value`, any value a condition may hold;
 * `string`, `regex` (RE2, checked), `glob` (gobwas/glob, checked, glob.ts), literals;
 * `count`, an integer literal of at least 0 (limit and truncate_all refuse a negative
 * limit when the statement is built: func_limit.go @dbb03bce, func_truncate_all.go
 * @0e04f1f3); `strings`, a list of string literals; `oneOf`, a string literal from the set.
 * limit also refuses a limit below its number of priority keys (parser.ts checks it).
 */
export type EditorArg = "target" | "map" | "value" | "string" | "regex" | "glob" | "count" | "strings" | { oneOf: readonly string[] };

export const EDITORS: Readonly<Record<string, readonly (readonly [name: string, kind: EditorArg])[]>> = {
  set: [
    ["target", "target"],
    ["value", "value"],
  ],
  delete_key: [
    ["target", "map"],
    ["key", "string"],
  ],
  delete_matching_keys: [
    ["target", "map"],
    ["pattern", "regex"],
  ],
  keep_keys: [
    ["target", "map"],
    ["keys", "strings"],
  ],
  keep_matching_keys: [
    ["target", "map"],
    ["pattern", "regex"],
  ],
  limit: [
    ["target", "map"],
    ["limit", "count"],
    ["priority_keys", "strings"],
  ],
  truncate_all: [
    ["target", "map"],
    ["limit", "count"],
  ],
  merge_maps: [
    ["target", "map"],
    ["source", "value"],
    ["strategy", { oneOf: ["insert", "update", "upsert"] }],
  ],
  replace_pattern: [
    ["target", "target"],
    ["regex", "regex"],
    ["replacement", "string"],
  ],
  replace_all_patterns: [
    ["target", "map"],
    ["mode", { oneOf: ["key", "value"] }],
    ["regex", "regex"],
    ["replacement", "string"],
  ],
  replace_match: [
    ["target", "target"],
    ["pattern", "glob"],
    ["replacement", "string"],
  ],
  replace_all_matches: [
    ["target", "map"],
    ["pattern", "glob"],
    ["replacement", "string"],
  ],
};
