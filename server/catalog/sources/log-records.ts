/**
 * What a log record looks like when it reaches a pipeline's first processor,
 * per source type and runtime, as read from the upstream sources below; and
 * the mapping svc renders on Runtime R (Alloy) so that the record matches
 * Runtime O's (the OpenTelemetry Collector's) wherever it can.
 *
 * Runtime R reads files, the journal and syslog with generally available
 * `loki.source.*` components and converts with `otelcol.receiver.loki`
 * (its `otelcol.receiver.filelog` and `otelcol.receiver.syslog` are public
 * preview, and a remote config with one is refused whole at the default
 * stability level). That conversion puts the Loki line in the body, every
 * label in a string attribute, plus `loki.attribute.labels` (the label
 * names) and, for a `filename` label, `log.file.path` and `log.file.name`;
 * it sets no severity. svc relabels the internal labels it needs, and a
 * generally available `otelcol.processor.transform` per source sets
 * severity, restores otelcol's attribute names and removes the rest.
 *
 * What cannot be made equal is listed in LOG_RECORD_SHAPES with `differs`;
 * a route whose processors read such a field is refused on Runtime R
 * (server/render/parity.ts).
 */

/** Where a fact comes from. */
export interface Upstream {
  repo: string;
  path: string;
  /** A release tag, or the commit the file was read at. */
  version: string;
  fact: string;
}

export const UPSTREAM: readonly Upstream[] = [
  {
    repo: "grafana/alloy",
    path: "internal/component/otelcol/receiver/loki/loki.go",
    version: "66ebea856dffb242f921775e9552a133f60dc5c1 (v1.18.0-119, main 2026-08-21)",
    fact: "convertLokiEntryToPlog: body = line; each label a string attribute; loki.attribute.labels = label names; filename label adds log.file.path and log.file.name (path.Base); no severity. Stability GA.",
  },
  {
    repo: "open-telemetry/opentelemetry-collector-contrib",
    path: "pkg/translator/loki/loki_to_otlp.go",
    version: "v0.158.0 (Alloy's go.mod at 66ebea85; the v1.18.1 tag pins v0.153.0); read at 2d766eb97595a37cebf32eb2503c49ef05226c1c",
    fact: "ConvertEntryToLogRecord: body SetStr(line), labels PutStr, timestamps; nothing else.",
  },
  {
    repo: "grafana/alloy",
    path: "internal/component/loki/source/syslog/internal/syslogtarget/syslogtarget.go",
    version: "66ebea856dffb242f921775e9552a133f60dc5c1",
    fact: "labels __syslog_message_{severity,facility,hostname,app_name,proc_id,msg_id} from go-syslog (facility = FacilityLevel(), the keyword); no label for the version; structured data only with label_structured_data, one label per parameter; labels starting __ dropped after relabel_rules; line = MSG only (whole message only with use_rfc5424_message); a message without MSG is dropped (RFC 5424 ones kept with rfc5424_allow_empty_msg, added in v1.15.0 by 178b1e642e, which svc does not set so that older Alloy accepts the config).",
  },
  {
    repo: "leodido/go-syslog",
    path: "common (SeverityLevels, used by Base.SeverityLevel)",
    version: "v4.6.0 (Alloy's go.mod at 66ebea85; the v1.18.1 tag pins v4.5.0, whose common/facility.go and severity keywords are v4.3.0's, the collector's)",
    fact: "severity keywords 0..7: emergency, alert, critical, error, warning, notice, informational, debug.",
  },
  {
    repo: "open-telemetry/opentelemetry-collector-contrib",
    path: "pkg/stanza/operator/parser/syslog/parser.go",
    version: "8e611e202843baffb4e1dbe5c935eb7301a6e245",
    fact: "parsed into attributes (parse_to default): hostname, appname, proc_id, msg_id, message, priority, facility, facility_text, and for RFC 5424 version and structured_data; severity attribute removed and mapped 0..7 to FATAL, ERROR3, ERROR2, ERROR, WARN, INFO2, INFO, DEBUG with text emerg, alert, crit, err, warning, notice, info, debug; body keeps the received line.",
  },
  {
    repo: "open-telemetry/opentelemetry-collector-contrib",
    path: "pkg/stanza/operator/helper/parser.go",
    version: "read via code search, 2026-11",
    fact: "NewParserConfig: parse_from body, parse_to attributes, no body field: a parser leaves the body as it was (the syslog line).",
  },
  {
    repo: "open-telemetry/opentelemetry-collector-contrib",
    path: "pkg/stanza/adapter/converter.go",
    version: "read via code search, 2026-11",
    fact: "stanza severities map one-to-one to plog severity numbers (Info2 → SEVERITY_NUMBER_INFO2 = 10, Error3 → 19, Fatal → 21); a set SeverityText is kept.",
  },
  {
    repo: "open-telemetry/opentelemetry-collector-contrib",
    path: "pkg/stanza/operator/input/journald/input.go, config_linux.go",
    version: "6d0bfbda73bc41acdca1fee82ee7eb610dc6ca0a, 4a4771dd03f8951b8f3a74bfdc0b12a26f589750",
    fact: "journalctl --output=json --priority info (default priority info: PRIORITY 0..6 only); body = map of every field but __REALTIME_TIMESTAMP; no severity, no attributes. (journald_attr_mapping.go at 88fbbd65 maps PRIORITY to severity and MESSAGE to body, but is not what the receiver does with svc's config.)",
  },
  {
    repo: "grafana/alloy",
    path: "internal/component/loki/source/journal/tailer.go",
    version: "66ebea856dffb242f921775e9552a133f60dc5c1",
    fact: "line = MESSAGE (entries without MESSAGE skipped); labels job = component id, __journal_<field lowercased> for every field, __journal_priority_keyword; every priority read.",
  },
  {
    repo: "open-telemetry/opentelemetry-collector-contrib",
    path: "pkg/stanza/trim/trim.go",
    version: "ae50bdd02f28d0458acf0f9a5798965157bfe62b",
    fact: "filelog trims leading and trailing \\r \\n \\t and space from each line by default; include_file_name (default true) sets log.file.name.",
  },
  {
    repo: "grafana/alloy",
    path: "internal/component/loki/source/file/internal/tail/reader.go, tailer.go",
    version: "66ebea856dffb242f921775e9552a133f60dc5c1",
    fact: "line with one trailing \\n and \\r removed, no other trimming; label filename = the file's path.",
  },
  {
    repo: "open-telemetry/opentelemetry-collector-contrib",
    path: "pkg/stanza/operator/helper/parser.go, pkg/stanza/operator/parser/{json,regex}/parser.go, pkg/stanza/operator/helper/regexp.go",
    version:
      "1ba49ba839c739d6bf0a264a26c7b2a959ffd71c, 06b8e502e9cb47943f42f280058d9e94d8523a9f, 1d376147ae77d2350780a7b36981fe6767b0ead1, 9c3b4b52552c95b4332e00035694c6cd5c39a2f5",
    fact: "a parser parses the body into a map merged into attributes (parse_to default), then its timestamp and severity sub-parsers read parsed fields; any error sends the record on unchanged past that point (on_error send). json_parser: JSON object, numbers as doubles (parse_ints off), a non-object is an error. regex_parser: every named group of the first match as a string (empty when unmatched), no match is an error.",
  },
  {
    repo: "open-telemetry/opentelemetry-collector-contrib",
    path: "pkg/stanza/operator/helper/time.go, severity.go, severity_builder.go",
    version: "00e6dd7ca2b3ebbb581bb495a5a89c3f72dbdb01, 04ed0fb65609fe6e0b000506859659fd4e7790eb",
    fact: "timestamp: layout_type strptime (default) converted to a Go layout, location Local unless the layout ends in Z (UTC); a non-string value is an error. severity: the default preset maps trace…fatal4, 1…24, warning*, err* (lower-cased) to stanza severities; the text is the value as found (a whole double as its integer); an unmapped value sets severity 0 with that text; a non-whole double or another type is an error and sets neither.",
  },
  {
    repo: "open-telemetry/opentelemetry-collector-contrib",
    path: "pkg/ottl/ottlfuncs/func_{parse_json,extract_patterns,time,convert_case,string}.go",
    version: "read via code search, 2026-11 (ExtractPatterns 10443128, Time 453364964)",
    fact: "ParseJSON: object to map, numbers as doubles, else an error; ExtractPatterns: map of every named group as a string, empty map on no match; Time: strptime format through timeutils.StrptimeToGotime (the same directives as stanza's), location Local unless the format ends in Z, parsed by timeutils.ParseGotime, which fills in a missing year as stanza does (SetTimestampYear; internal/coreinternal/timeutils, code search id 583346488). With error_mode ignore a failing statement is skipped and the record kept, as stanza's on_error send does.",
  },
  {
    repo: "open-telemetry/opentelemetry-collector-contrib",
    path: "pkg/stanza/split/split.go",
    version: "2bcbb372ccc02c45de2b8d2aa43ebb3be9774f9a",
    fact: "multiline line_start_pattern / line_end_pattern (only one) compiled with (?m) and matched over the stream: a record starts (ends) at each match; text before the first start match is one record.",
  },
  {
    repo: "grafana/alloy",
    path: "internal/component/loki/process/stages/multiline.go",
    version: "66ebea856dffb242f921775e9552a133f60dc5c1",
    fact: "stage.multiline: firstline matched against each line; a matching line starts a block, lines are joined with \n; lines before the first match pass through one by one; a block is flushed after max_wait_time (svc sets 500ms, the filelog receiver's force_flush_period default) or at max_lines (default 128). No end-of-record pattern.",
  },
  {
    repo: "grafana/alloy",
    path: "internal/component/{otelcol/processor/transform,loki/relabel,loki/source/{file,journal,syslog},otelcol/receiver/loki}/*.go",
    version: "66ebea856dffb242f921775e9552a133f60dc5c1",
    fact: "Stability GA for otelcol.processor.transform, loki.relabel, loki.source.file/journal/syslog, otelcol.receiver.loki; public preview for otelcol.receiver.filelog and otelcol.receiver.syslog.",
  },
];

/** The log sources whose records the runtimes build differently; OTLP is the same receiver in both. */
export const LOG_SOURCE_TYPES = ["filelog", "journald", "syslog", "otlp"] as const;
export type LogSourceType = (typeof LOG_SOURCE_TYPES)[number];

/** The parts of a record a processor can read, as OTTL names them (severity stands for severity_number and severity_text). */
export const RECORD_PARTS = ["body", "severity", "attributes", "resource", "scope"] as const;
export type RecordPart = (typeof RECORD_PARTS)[number];

export interface PartShape {
  otelcol: string;
  alloy: string;
  /** false: equal after svc's mapping; true: differs; a list: only those attribute keys differ (so does the map as a whole). */
  differs: boolean | readonly string[];
}

const SAME_EMPTY = (what: string): PartShape => ({ otelcol: `no ${what}`, alloy: `no ${what}`, differs: false });

/** Per source type and record part: the record at the first processor on each runtime (Runtime R after svc's mapping). */
export const LOG_RECORD_SHAPES: Readonly<Record<LogSourceType, Readonly<Record<RecordPart, PartShape>>>> = {
  otlp: {
    body: { otelcol: "as sent", alloy: "as sent", differs: false },
    severity: { otelcol: "as sent", alloy: "as sent", differs: false },
    attributes: { otelcol: "as sent", alloy: "as sent", differs: false },
    resource: { otelcol: "as sent", alloy: "as sent", differs: false },
    scope: { otelcol: "as sent", alloy: "as sent", differs: false },
  },
  filelog: {
    body: {
      otelcol: "the line, leading and trailing whitespace trimmed",
      alloy: "the line, trimmed by svc's transform the same way",
      differs: false,
    },
    severity: {
      otelcol: "none, or from a parsed field when the parser's severity is set (stanza's default mapping)",
      alloy: "the same, set by svc's transform with that mapping",
      differs: false,
    },
    attributes: {
      otelcol: "log.file.name, plus the parsed fields when a parser is set",
      alloy: "the same: filename, log.file.path and loki.attribute.labels removed and the line parsed by svc's transform",
      differs: false,
    },
    resource: SAME_EMPTY("resource attributes"),
    scope: SAME_EMPTY("scope"),
  },
  journald: {
    body: {
      otelcol: "a map of every journal field (MESSAGE, PRIORITY, _SYSTEMD_UNIT, …)",
      alloy: "the MESSAGE text only",
      differs: true,
    },
    severity: SAME_EMPTY("severity"),
    attributes: {
      otelcol: "none",
      alloy: "none (job and loki.attribute.labels removed by svc's transform)",
      differs: false,
    },
    resource: SAME_EMPTY("resource attributes"),
    scope: SAME_EMPTY("scope"),
  },
  syslog: {
    body: {
      otelcol: "the whole syslog line as received (priority, header and message)",
      alloy: "the message part only",
      differs: true,
    },
    severity: {
      otelcol: 'from the syslog severity (e.g. warning → SEVERITY_NUMBER_WARN, text "warning")',
      alloy: "the same, set by svc's transform from the relabelled severity",
      differs: false,
    },
    attributes: {
      otelcol: "hostname, appname, proc_id, msg_id, message, priority, facility, facility_text, and for RFC 5424 version and structured_data",
      alloy:
        "hostname, appname, proc_id, msg_id, message, priority, facility and facility_text, set by svc's transform from the relabelled labels; no version, no structured_data",
      differs: ["version", "structured_data"],
    },
    resource: SAME_EMPTY("resource attributes"),
    scope: SAME_EMPTY("scope"),
  },
};

/** Syslog severity 0..7: go-syslog's keyword (Alloy's label value) and what otelcol's syslog parser sets. */
export const SYSLOG_SEVERITIES: readonly { code: number; keyword: string; number: string; text: string }[] = [
  { code: 0, keyword: "emergency", number: "SEVERITY_NUMBER_FATAL", text: "emerg" },
  { code: 1, keyword: "alert", number: "SEVERITY_NUMBER_ERROR3", text: "alert" },
  { code: 2, keyword: "critical", number: "SEVERITY_NUMBER_ERROR2", text: "crit" },
  { code: 3, keyword: "error", number: "SEVERITY_NUMBER_ERROR", text: "err" },
  { code: 4, keyword: "warning", number: "SEVERITY_NUMBER_WARN", text: "warning" },
  { code: 5, keyword: "notice", number: "SEVERITY_NUMBER_INFO2", text: "notice" },
  { code: 6, keyword: "informational", number: "SEVERITY_NUMBER_INFO", text: "info" },
  { code: 7, keyword: "debug", number: "SEVERITY_NUMBER_DEBUG", text: "debug" },
];

/** The label svc relabels the syslog severity into, read and removed by the transform. */
export const SYSLOG_SEVERITY_LABEL = "svc_syslog_severity";

/** The label svc relabels the syslog facility keyword into, read and removed by the transform. */
export const SYSLOG_FACILITY_LABEL = "svc_syslog_facility";

/**
 * go-syslog's FacilityKeywords (common/facility.go, identical in v4.3.0, the collector's, and v4.5.0, Alloy
 * v1.18.1's), by code: the value of Alloy's __syslog_message_facility label and of otelcol's facility_text attribute
 * (both call FacilityLevel()).
 */
export const SYSLOG_FACILITIES: readonly string[] = [
  "kern",
  "user",
  "mail",
  "daemon",
  "auth",
  "syslog",
  "lpr",
  "news",
  "uucp",
  "cron",
  "authpriv",
  "ftp",
  "ntp",
  "security",
  "console",
  "cron2",
  "local0",
  "local1",
  "local2",
  "local3",
  "local4",
  "local5",
  "local6",
  "local7",
];

/** loki.source.syslog's internal labels kept as otelcol's syslog parser names the attributes. */
export const SYSLOG_LABELS: readonly { label: string; attribute: string }[] = [
  { label: "__syslog_message_hostname", attribute: "hostname" },
  { label: "__syslog_message_app_name", attribute: "appname" },
  { label: "__syslog_message_proc_id", attribute: "proc_id" },
  { label: "__syslog_message_msg_id", attribute: "msg_id" },
];

/** journalctl's default `--priority info` in otelcol: PRIORITY 0..6 (an entry without PRIORITY does not match). */
export const JOURNAL_PRIORITY_KEEP = "[0-6]";

/** Attributes otelcol.receiver.loki adds that the otelcol receiver has no equivalent of, per source type. */
export const LOKI_ONLY_ATTRIBUTES: Readonly<Record<"filelog" | "journald" | "syslog", readonly string[]>> = {
  filelog: ["filename", "log.file.path", "loki.attribute.labels"],
  journald: ["job", "loki.attribute.labels"],
  syslog: ["loki.attribute.labels", SYSLOG_SEVERITY_LABEL, SYSLOG_FACILITY_LABEL],
};

/** stanza's default trim (pkg/stanza/trim Whitespace) as an RE2 pattern over the body. */
export const FILELOG_TRIM_PATTERN = "^[\\r\\n\\t ]+|[\\r\\n\\t ]+$";

/**
 * stanza's default severity preset (pkg/stanza/operator/helper/severity_builder.go getBuiltinMapping, read at
 * 00e6dd7c): the lower-cased values that map to each plog severity number. Trace…Fatal4 are 1…24, one-to-one
 * with plog's numbers (pkg/stanza/adapter/converter.go).
 */
export const STANZA_DEFAULT_SEVERITIES: readonly { number: string; values: readonly string[] }[] = ["TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"].flatMap(
  (level, i) =>
    ["", "2", "3", "4"].map((suffix, j) => ({
      number: `SEVERITY_NUMBER_${level}${suffix}`,
      values: [
        `${level.toLowerCase()}${suffix}`,
        String(i * 4 + j + 1),
        ...(level === "WARN" ? [`warning${suffix}`] : level === "ERROR" ? [`err${suffix}`] : []),
      ],
    })),
);
