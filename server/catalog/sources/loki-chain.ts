/**
 * The Runtime R tail of the file, journal and syslog sources:
 * `otelcol.receiver.loki` into an `otelcol.processor.transform` (both
 * generally available) that reshapes each record as Runtime O's receiver
 * builds it (see log-records.ts), and carries the pipeline's `output`.
 */
import { ottlLiteral } from "../processors/actions.ts";
import { attr, block, raw, ref, type AlloyBlock } from "../alloy-syntax.ts";
import {
  FILELOG_TRIM_PATTERN,
  LOKI_ONLY_ATTRIBUTES,
  SYSLOG_FACILITIES,
  SYSLOG_FACILITY_LABEL,
  SYSLOG_LABELS,
  SYSLOG_SEVERITIES,
  SYSLOG_SEVERITY_LABEL,
} from "./log-records.ts";

const removeLokiOnly = (source: keyof typeof LOKI_ONLY_ATTRIBUTES) => LOKI_ONLY_ATTRIBUTES[source].map((key) => `delete_key(attributes, ${ottlLiteral(key)})`);

/** The transform statements per source type, in order. */
export const SHAPING_STATEMENTS: Readonly<Record<keyof typeof LOKI_ONLY_ATTRIBUTES, readonly string[]>> = {
  filelog: [`replace_pattern(body, ${ottlLiteral(FILELOG_TRIM_PATTERN)}, "")`, ...removeLokiOnly("filelog")],
  journald: removeLokiOnly("journald"),
  syslog: [
    `set(attributes["message"], body)`,
    ...SYSLOG_SEVERITIES.flatMap(({ keyword, number, text }) => {
      const when = `where attributes[${ottlLiteral(SYSLOG_SEVERITY_LABEL)}] == ${ottlLiteral(keyword)}`;
      return [`set(severity_number, ${number}) ${when}`, `set(severity_text, ${ottlLiteral(text)}) ${when}`];
    }),
    // facility_text is the keyword itself; facility its code; priority facility * 8 + severity, as the syslog parser sets them.
    `set(attributes["facility_text"], attributes[${ottlLiteral(SYSLOG_FACILITY_LABEL)}]) where attributes[${ottlLiteral(SYSLOG_FACILITY_LABEL)}] != nil`,
    ...SYSLOG_FACILITIES.map(
      (keyword, code) => `set(attributes["facility"], ${code}) where attributes[${ottlLiteral(SYSLOG_FACILITY_LABEL)}] == ${ottlLiteral(keyword)}`,
    ),
    ...SYSLOG_SEVERITIES.map(
      ({ code, keyword }) =>
        `set(attributes["priority"], attributes["facility"] * 8 + ${code}) where attributes["facility"] != nil and attributes[${ottlLiteral(SYSLOG_SEVERITY_LABEL)}] == ${ottlLiteral(keyword)}`,
    ),
    ...removeLokiOnly("syslog"),
  ],
};

/** `loki.relabel` rules copying syslog's internal labels to the names otelcol's syslog parser gives the attributes. */
export function syslogRelabelRules(): AlloyBlock[] {
  return [
    { label: "__syslog_message_severity", attribute: SYSLOG_SEVERITY_LABEL },
    { label: "__syslog_message_facility", attribute: SYSLOG_FACILITY_LABEL },
    ...SYSLOG_LABELS,
  ].map(({ label, attribute }) => block("rule", undefined, [attr("source_labels", [label]), attr("target_label", attribute)]));
}

/** `otelcol.receiver.loki` and the source's shaping transform, which carries `output`; `more` statements run after the shaping ones. */
export function lokiToOtelcol(source: keyof typeof SHAPING_STATEMENTS, label: string, output: AlloyBlock, more: readonly string[] = []): AlloyBlock[] {
  return [
    block("otelcol.receiver.loki", label, [block("output", undefined, [attr("logs", [ref(`otelcol.processor.transform.${label}.input`)])])]),
    block("otelcol.processor.transform", label, [
      attr("error_mode", "ignore"),
      block("log_statements", undefined, [attr("context", "log"), attr("statements", [...SHAPING_STATEMENTS[source], ...more].map(raw))]),
      output,
    ]),
  ];
}
