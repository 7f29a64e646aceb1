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
 * `string`, `regex` (RE2, checked), `int`, literals; `strings`, a list of string
 * literals; `oneOf`, a string literal from the set.
 */
export type EditorArg = "target" | "map" | "value" | "string" | "regex" | "int" | "strings" | { oneOf: readonly string[] };

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
    ["limit", "int"],
    ["priority_keys", "strings"],
  ],
  truncate_all: [
    ["target", "map"],
    ["limit", "int"],
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
    ["pattern", "string"],
    ["replacement", "string"],
  ],
  replace_all_matches: [
    ["target", "map"],
    ["pattern", "string"],
    ["replacement", "string"],
  ],
};
