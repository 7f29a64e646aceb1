/** The filelog source's upstream facts (upstream/types.ts): the collector's filelog receiver with its parsers, and Alloy's file tailing. */
import { alloyAt, attr, blocks, contrib, RECEIVERS, TARGETS } from "../../upstream/shared.ts";
import type { TypeUpstream } from "../../upstream/types.ts";

// ---- filelog parsing and multiline (issue 24 part 10) ----
/**
 * `operators` (pkg/stanza/adapter/config.go BaseConfig) holding one stanza parser: helper.ParserConfig
 * (helper/parser.go at 1ba49ba8: timestamp, severity), regex_parser's `regex` (parser/regex/config.go at
 * 2d585794), helper.TimeParser (helper/time.go at 00e6dd7c: parse_from, layout_type strptime|gotime|epoch,
 * layout) and helper.SeverityConfig (helper/severity_builder.go at 00e6dd7c: parse_from). `multiline` is
 * split.Config (split/split.go at 2bcbb372), squashed into the filelog config under that key.
 */
const OPERATORS = {
  list: {
    object: {
      type: { oneOf: ["json_parser", "regex_parser"] },
      regex: "string",
      timestamp: { object: { parse_from: "string", layout_type: { oneOf: ["strptime", "gotime", "epoch"] }, layout: "string" } },
      severity: { object: { parse_from: "string" } },
    },
  },
} as const;
const MULTILINE = { object: { line_start_pattern: "string", line_end_pattern: "string" } } as const;
const PARSE_SOURCES = [
  contrib("pkg/stanza/adapter/config.go", "1a1a3e1ac6855509b18279fba6843f12af9195a0"),
  contrib("pkg/stanza/operator/helper/parser.go", "1ba49ba839c739d6bf0a264a26c7b2a959ffd71c"),
  contrib("pkg/stanza/operator/parser/regex/config.go", "2d58579477a62b2d4d08ca5640ae74a192c51e41"),
  contrib("pkg/stanza/operator/helper/time.go", "00e6dd7ca2b3ebbb581bb495a5a89c3f72dbdb01"),
  contrib("pkg/stanza/operator/helper/severity_builder.go", "00e6dd7ca2b3ebbb581bb495a5a89c3f72dbdb01"),
  contrib("pkg/stanza/split/split.go", "2bcbb372ccc02c45de2b8d2aa43ebb3be9774f9a"),
];
// ---- end filelog parsing and multiline ----

export const UPSTREAM: TypeUpstream = {
  otelcol: [
    {
      type: "filelog",
      kind: "receiver",
      source: contrib("pkg/stanza/fileconsumer/config.go", "bb12e47671a7a0809f95060dd0716d7e40641ff2"),
      config: {
        include: { list: "string" },
        exclude: { list: "string" },
        start_at: { oneOf: ["beginning", "end"] },
        operators: OPERATORS,
        multiline: MULTILINE,
      },
    },
  ],
  alloy: [
    {
      name: "local.file_match",
      stability: "generally-available",
      source: alloyAt("internal/component/local/file_match/file.go"),
      arguments: { path_targets: attr(TARGETS) },
    },
    {
      name: "loki.source.file",
      stability: "generally-available",
      source: alloyAt("internal/component/loki/source/file/file.go"),
      arguments: { targets: attr(TARGETS), forward_to: attr(RECEIVERS), tail_from_end: attr("bool") },
    },
    /**
     * loki.process (internal/component/loki/process/process.go, GA) with its `stage.multiline` block
     * (stages/multiline.go MultilineConfig: firstline, matched against each line; max_wait_time, which Validate wants > 0).
     */
    {
      name: "loki.process",
      stability: "generally-available",
      source: alloyAt("internal/component/loki/process/process.go"),
      arguments: {
        forward_to: attr(RECEIVERS),
        "stage.multiline": blocks({ firstline: attr("string"), max_wait_time: attr("go-duration") }),
      },
    },
  ],
  also: PARSE_SOURCES,
};
