/**
 * Parsing and multiline for the filelog source, on both runtimes.
 *
 * Runtime O: the filelog receiver's `multiline` splitter and one stanza
 * parser operator (json_parser or regex_parser) with its `timestamp`
 * (strptime) and `severity` (default preset) sub-parsers.
 *
 * Runtime R reads files with loki.source.file (filelog.ts): multiline is a
 * `loki.process` `stage.multiline` before otelcol.receiver.loki, and parsing
 * runs in the shaping transform as OTTL that does what stanza does
 * (log-records.ts UPSTREAM): ParseJSON / ExtractPatterns merged into the
 * attributes, Time with the same strptime directives, and stanza's default
 * severity mapping spelled out. Stanza's regex and Alloy's OTTL are both Go
 * RE2, so a pattern means the same on both. Two things do not carry over:
 * `line_end_pattern` (stage.multiline only knows a first line), refused on
 * Runtime R; and a start pattern that could match mid-line (stanza matches
 * the stream, Alloy each line), so it must be anchored with `^`.
 */
import { Type, type Static } from "@sinclair/typebox";
import { ottlLiteral } from "../processors/actions.ts";
import { attr, block, type AlloyBlock } from "../alloy-syntax.ts";
import { compileRe2, re2GroupNames, re2Problem } from "../../ottl/regex.ts";
import type { ErrorDetail } from "../../errors.ts";
import { Closed, NoReferences, StringEnum } from "../schemas.ts";
import { STANZA_DEFAULT_SEVERITIES } from "./log-records.ts";
import { RUNTIME_NAMES } from "../../../shared/vocabulary.ts";

const INTO_OTTL = "svc writes it into the collector's parser config and Alloy's OTTL, where an attribute must not become code";

/** A parsed field: keys of word characters, a dot between nested ones (`level`, `log.level`). */
const FieldPath = (description: string) =>
  Type.Optional(
    NoReferences(
      Type.String({
        pattern: "^[A-Za-z0-9_]+(\\.[A-Za-z0-9_]+)*$",
        errorMessage: "must be a parsed field name (letters, digits, _), a dot between nested keys",
        description,
      }),
      INTO_OTTL,
    ),
  );

const Pattern = (description: string) => Type.Optional(NoReferences(Type.String({ minLength: 1, description }), INTO_OTTL));

export const PARSER_FORMATS = ["none", "json", "regex"] as const;

export const parserSchema = () =>
  Closed(
    {
      format: StringEnum(PARSER_FORMATS, {
        default: "none",
        description: "Parse each record: a JSON object, or a regex with named groups; the fields become attributes.",
      }),
      regex: Pattern("For format regex: an RE2 pattern with named groups, e.g. ^(?P<time>\\S+) (?P<level>\\w+) (?P<msg>.*)$."),
      timestamp: Closed(
        {
          field: FieldPath("Parsed field holding the record's time."),
          layout: Type.Optional(
            NoReferences(
              Type.String({
                minLength: 1,
                pattern: "%",
                errorMessage: "must be a strptime layout such as %Y-%m-%dT%H:%M:%S%z",
                description: "strptime layout of that field, e.g. %Y-%m-%d %H:%M:%S.",
              }),
              INTO_OTTL,
            ),
          ),
        },
        { default: {}, title: "Timestamp" },
      ),
      severity: Closed(
        { field: FieldPath("Parsed field holding the level (error, WARN, 13, …), mapped as the collector's default severity preset.") },
        { default: {}, title: "Severity" },
      ),
    },
    { default: {}, title: "Parsing" },
  );

export const multilineSchema = () =>
  Closed(
    {
      line_start_pattern: Pattern("RE2 pattern, starting with ^, of a line that begins a record; the lines up to the next such line join it."),
      line_end_pattern: Pattern(`RE2 pattern that ends a record (${RUNTIME_NAMES.otelcol} only: Alloy has no end-of-record pattern).`),
    },
    { default: {}, title: "Multiline" },
  );

export type ParserConfig = Static<ReturnType<typeof parserSchema>>;
export type MultilineConfig = Static<ReturnType<typeof multilineSchema>>;

/**
 * The strptime directives stanza's TimeParser.Validate (pkg/stanza/operator/helper/time.go,
 * open-telemetry/opentelemetry-collector-contrib@00e6dd7c, github.com/observiq/ctimefmt) and
 * OTTL's Time (timeutils.StrptimeToGotime) accept: ctimefmt.ToNative's ctimeSubstitutes
 * (internal/coreinternal/timeutils/internal/ctimefmt/ctimefmt.go @c1b6ca9d25f1). ToNative
 * refuses any other `%x` and any digit in the layout, so the collector does not start.
 */
const STRPTIME_DIRECTIVES = new Set("YymoqbhBdegaAHlIpPMSLfsZzwijkDxFTXrRnt%c");

/** Why ctimefmt.ToNative refuses a strptime layout, or undefined. */
export function strptimeProblem(layout: string): string | undefined {
  const digit = /[0-9]/.exec(layout);
  if (digit) return `must not contain digits (the collector's strptime refuses them), found '${digit[0]}' at ${digit.index}`;
  // ToNative replaces each `%.` left to right; `.` does not match a newline, a trailing `%` stays literal.
  for (const m of layout.matchAll(/%./g)) {
    if (!STRPTIME_DIRECTIVES.has(m[0][1]!)) {
      return `has the directive ${m[0]} (at ${m.index}) the collector's strptime does not support; use %Y %m %d %H %M %S %L %f %z %Z %b %a …`;
    }
  }
  return undefined;
}

/**
 * A multiline pattern that matches the empty string splits nothing: the receiver
 * compiles "(?m)" + pattern (split.Config.Func, pkg/stanza/split/split.go @2bcbb372),
 * and an empty match makes LineEndSplitFunc return empty tokens without advancing
 * and LineStartSplitFunc cut a record per byte.
 */
function emptyMatchProblem(pattern: string): string | undefined {
  return compileRe2(`(?m)${pattern}`).test("")
    ? "matches the empty string, so the collector cannot split records on it; match at least one character"
    : undefined;
}

/** The cross-field rules of parsing and multiline. */
export function parseProblems(parser: ParserConfig, multiline: MultilineConfig, root: string): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const at = (path: string, message: string) => problems.push({ path: `${root}.${path}`, message });
  if (parser.format === "regex") {
    if (parser.regex === undefined) at("parser.regex", "is required when format is regex");
    else {
      const bad = re2Problem(parser.regex);
      // The group names from a real RE2 parse: a (?P<x>…) inside \Q…\E or a class is no group.
      if (bad !== undefined) at("parser.regex", bad);
      else if (re2GroupNames(parser.regex).length === 0)
        at("parser.regex", "needs at least one named group, e.g. (?P<level>\\w+): the groups become the attributes");
    }
  } else if (parser.regex !== undefined) {
    at("parser.regex", "is only read when format is regex");
  }
  const { timestamp, severity } = parser;
  for (const [name, set] of [
    ["timestamp", timestamp.field !== undefined || timestamp.layout !== undefined],
    ["severity", severity.field !== undefined],
  ] as const) {
    if (set && parser.format === "none") at(`parser.${name}`, "reads a parsed field, so it needs a format (json or regex)");
  }
  if ((timestamp.field === undefined) !== (timestamp.layout === undefined)) {
    at(`parser.timestamp.${timestamp.field === undefined ? "field" : "layout"}`, "timestamp needs both field and layout");
  }
  const badLayout = timestamp.layout === undefined ? undefined : strptimeProblem(timestamp.layout);
  if (badLayout !== undefined) at("parser.timestamp.layout", badLayout);
  const { line_start_pattern: start, line_end_pattern: end } = multiline;
  if (start !== undefined && end !== undefined) at("multiline.line_end_pattern", "set line_start_pattern or line_end_pattern, not both");
  if (start !== undefined) {
    const bad = re2Problem(start) ?? emptyMatchProblem(start);
    if (bad !== undefined) at("multiline.line_start_pattern", bad);
    else if (!start.startsWith("^")) {
      at(
        "multiline.line_start_pattern",
        "must start with ^: a record starts at a line that matches (the collector would also split mid-line, Alloy would not)",
      );
    }
  }
  if (end !== undefined) {
    const bad = re2Problem(end) ?? emptyMatchProblem(end);
    if (bad !== undefined) at("multiline.line_end_pattern", bad);
  }
  return problems;
}

/** Why Runtime R cannot read the source as Runtime O does, or undefined. */
export function parseAlloyProblem(multiline: MultilineConfig): string | undefined {
  return multiline.line_end_pattern === undefined
    ? undefined
    : "multiline.line_end_pattern has no Alloy equivalent (loki.process stage.multiline only recognises a record's first line); use line_start_pattern";
}

// ---- Runtime O -------------------------------------------------------------------------

/** A stanza field in dot syntax: `attributes.log.level`. */
const stanzaField = (path: string) => `attributes.${path}`;

/** The filelog receiver's `operators` and `multiline` keys, each only when set. */
export function otelcolParse(parser: ParserConfig, multiline: MultilineConfig): Record<string, unknown> {
  const split = Object.fromEntries(Object.entries(multiline).filter(([, v]) => v !== undefined));
  const operators =
    parser.format === "none"
      ? []
      : [
          {
            type: parser.format === "json" ? "json_parser" : "regex_parser",
            ...(parser.format === "regex" ? { regex: parser.regex } : {}),
            ...(parser.timestamp.field !== undefined
              ? { timestamp: { parse_from: stanzaField(parser.timestamp.field), layout_type: "strptime", layout: parser.timestamp.layout } }
              : {}),
            ...(parser.severity.field !== undefined ? { severity: { parse_from: stanzaField(parser.severity.field) } } : {}),
          },
        ];
  return { ...(operators.length > 0 ? { operators } : {}), ...(Object.keys(split).length > 0 ? { multiline: split } : {}) };
}

// ---- Runtime R -------------------------------------------------------------------------

/** An OTTL path to a parsed field: `attributes["log"]["level"]`. */
const ottlField = (path: string) =>
  `attributes${path
    .split(".")
    .map((key) => `[${ottlLiteral(key)}]`)
    .join("")}`;

/**
 * The OTTL statements, after the shaping ones, that parse the record as the
 * stanza parser does: merge the parsed map into the attributes, then set time
 * and severity from parsed fields. A statement that fails is skipped and the
 * record kept (error_mode ignore), as stanza's on_error send keeps it.
 */
export function parseStatements(parser: ParserConfig): string[] {
  if (parser.format === "none") return [];
  const parsed = parser.format === "json" ? "ParseJSON(body)" : `ExtractPatterns(body, ${ottlLiteral(parser.regex!)})`;
  const statements = [`merge_maps(attributes, ${parsed}, "upsert")`];
  if (parser.timestamp.field !== undefined) {
    statements.push(`set(time, Time(${ottlField(parser.timestamp.field)}, ${ottlLiteral(parser.timestamp.layout!)}))`);
  }
  if (parser.severity.field !== undefined) {
    const field = ottlField(parser.severity.field);
    // stanza compares the value lower-cased, a whole double as its integer; String() prints 13.0 as "13".
    const lowered = `ConvertCase(String(${field}), "lower")`;
    for (const { number, values } of STANZA_DEFAULT_SEVERITIES) {
      statements.push(`set(severity_number, ${number}) where ${values.map((v) => `${lowered} == ${ottlLiteral(v)}`).join(" or ")}`);
    }
    // The text is the value as found; stanza refuses other types and non-whole doubles, setting neither.
    statements.push(`set(severity_text, String(${field})) where IsString(${field}) or IsInt(${field}) or (IsDouble(${field}) and Int(${field}) == ${field})`);
  }
  return statements;
}

/** How long stage.multiline waits for a block's next line: the filelog receiver's force_flush_period default. */
export const MULTILINE_WAIT = "500ms";

/** The `loki.process` block joining lines into records, or undefined without a start pattern. */
export function alloyMultiline(multiline: MultilineConfig, label: string, forwardTo: ReturnType<typeof attr>): AlloyBlock | undefined {
  if (multiline.line_start_pattern === undefined) return undefined;
  return block("loki.process", label, [
    forwardTo,
    block("stage.multiline", undefined, [attr("firstline", multiline.line_start_pattern), attr("max_wait_time", MULTILINE_WAIT)]),
  ]);
}
