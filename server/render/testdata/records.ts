/**
 * Sample log events per source type, and the record each runtime hands its
 * first processor for them, modelled from the upstream sources named in
 * catalog/sources/log-records.ts:
 *
 * - Runtime O: the otelcol receivers (syslog parser, journald input,
 *   filelog with its default trim and log.file.name), transcribed here.
 * - Runtime R: the `loki.source.*` entry (line and labels), then the Alloy
 *   blocks svc renders for the source, interpreted as Alloy runs them: the
 *   `loki.relabel` rules, `otelcol.receiver.loki`'s conversion, and the
 *   shaping transform's OTTL statements, whose `where` clauses are evaluated
 *   by the OTTL module.
 *
 * So a mapping the renderer gets wrong (a missing severity, a stray label)
 * shows up as a record that differs, and a filter that decides differently.
 *
 * A filelog parser is modelled on both sides (stanza's parser and severity
 * preset; the rendered ParseJSON/ExtractPatterns and severity statements);
 * timestamps and multiline joining are not (each event is one line, and no
 * filter here reads the time).
 */
import { posix } from "node:path";
import type { AlloyBlock, AlloyStatement } from "../../catalog/alloy-syntax.ts";
import { compileCondition, type LogView } from "../../ottl/compile.ts";
import { SEVERITY_NUMBERS } from "../../ottl/contexts.ts";
import type { AnyValue, KeyValue, LogRecord } from "../../ottl/otlp.ts";
import { compileRe2 } from "../../ottl/regex.ts";
import type { ParserConfig } from "../../catalog/sources/filelog-parse.ts";
import { STANZA_DEFAULT_SEVERITIES, SYSLOG_FACILITIES } from "../../catalog/sources/log-records.ts";

export interface SyslogEvent {
  kind: "syslog";
  protocol: "rfc5424" | "rfc3164";
  /** The line as sent. */
  line: string;
  severity: number;
  facility: number;
  hostname?: string;
  appname?: string;
  procId?: string;
  msgId?: string;
  message?: string;
  structuredData?: Record<string, Record<string, string>>;
}

export interface JournalEvent {
  kind: "journald";
  /** Journal fields as journalctl --output=json prints them (all strings here). */
  fields: Record<string, string>;
}

export interface FileEvent {
  kind: "filelog";
  path: string;
  /** One line of the file, without its newline. */
  line: string;
}

export interface OtlpEvent {
  kind: "otlp";
  record: LogRecord;
}

export type LogEvent = SyslogEvent | JournalEvent | FileEvent | OtlpEvent;

const FACILITY_KEYWORDS = SYSLOG_FACILITIES;

function syslog(protocol: SyslogEvent["protocol"], severity: number, facility: number, fields: Partial<SyslogEvent>): SyslogEvent {
  const pri = `<${facility * 8 + severity}>`;
  const host = fields.hostname ?? "-";
  const line =
    protocol === "rfc5424"
      ? `${pri}1 2026-11-24T07:00:00Z ${host} ${fields.appname ?? "-"} ${fields.procId ?? "-"} ${fields.msgId ?? "-"} -${fields.message === undefined ? "" : ` ${fields.message}`}`
      : `${pri}Nov 24 07:00:00 ${host} ${fields.appname ?? ""}${fields.procId ? `[${fields.procId}]` : ""}: ${fields.message ?? ""}`;
  return { kind: "syslog", protocol, line, severity, facility, ...fields };
}

/** A few events of each log source type; every syslog severity, journal priority 0..7 and none, lines with stray whitespace. */
export const SAMPLE_EVENTS: Readonly<Record<"syslog" | "journald" | "filelog" | "otlp", readonly LogEvent[]>> = {
  syslog: [
    ...[0, 1, 2, 3, 4, 5, 6, 7].map((severity) =>
      syslog("rfc5424", severity, 3, { hostname: "web-1", appname: "nginx", procId: "42", msgId: "ID7", message: `request ${severity} GET /healthz` }),
    ),
    ...[3, 4, 6].map((severity) => syslog("rfc3164", severity, 4, { hostname: "gw", appname: "sshd", procId: "9", message: `Accepted publickey ${severity}` })),
    syslog("rfc5424", 4, 1, { hostname: "db", appname: "cron.service", message: "no proc id or msg id" }),
  ],
  journald: [
    ...["0", "3", "4", "6", "7"].map(
      (priority): JournalEvent => ({
        kind: "journald",
        fields: {
          MESSAGE: `unit message ${priority}`,
          PRIORITY: priority,
          _SYSTEMD_UNIT: priority === "3" ? "cron.service" : "sshd.service",
          SYSLOG_IDENTIFIER: "sshd",
        },
      }),
    ),
    { kind: "journald", fields: { MESSAGE: "no priority", _SYSTEMD_UNIT: "nginx.service" } },
  ],
  filelog: [
    { kind: "filelog", path: "/var/log/nginx/access.log", line: '10.0.0.1 - - "GET /healthz HTTP/1.1" 200' },
    { kind: "filelog", path: "/var/log/nginx/access.log", line: '  10.0.0.2 - - "GET /index.html HTTP/1.1" 200 \r' },
    { kind: "filelog", path: "/var/log/nginx/api.access.log", line: "\tliveness probe" },
    { kind: "filelog", path: "/var/log/app/app.log", line: "ERROR something failed   " },
    // For parsing sources (filelog-parse.ts): JSON lines with levels of each kind stanza maps, and a Java log line.
    { kind: "filelog", path: "/var/log/app/app.json", line: '{"time":"2026-11-24T07:00:00.000+0000","log":{"level":"DEBUG"},"msg":"cache hit"}' },
    { kind: "filelog", path: "/var/log/app/app.json", line: ' {"time":"2026-11-24T07:00:01.000+0000","log":{"level":"Warning"},"msg":"slow"}' },
    { kind: "filelog", path: "/var/log/app/app.json", line: '{"log":{"level":17},"msg":"numeric error"}' },
    { kind: "filelog", path: "/var/log/app/app.json", line: '{"log":{"level":"verbose"},"level":"trace","filename":"kept"}' },
    { kind: "filelog", path: "/opt/service/logs/service.log", line: "2026-11-24 07:00:02 TRACE [main] starting" },
    { kind: "filelog", path: "/opt/service/logs/service.log", line: "2026-11-24 07:00:03 ERROR [pool-1] failed" },
  ],
  otlp: [
    { kind: "otlp", record: { severityNumber: 9, severityText: "INFO", body: { stringValue: "GET /healthz probe" } } },
    { kind: "otlp", record: { severityNumber: 17, body: { stringValue: "failed" }, attributes: [{ key: "url.path", value: { stringValue: "/healthz" } }] } },
  ],
};

/** The sample events a source with this (validated) config receives: a syslog listener reads one protocol. */
export function eventsFor(type: keyof typeof SAMPLE_EVENTS, config: Record<string, unknown>): readonly LogEvent[] {
  return SAMPLE_EVENTS[type].filter((e) => e.kind !== "syslog" || e.protocol === config.protocol);
}

const str = (stringValue: string): AnyValue => ({ stringValue });
const int = (intValue: number): AnyValue => ({ intValue });

// ---- Runtime O: the otelcol receivers -------------------------------------------------------

/** contrib pkg/stanza/operator/parser/syslog severityMapping / severityText, as plog numbers. */
const OTELCOL_SYSLOG_NUMBER = [21, 19, 18, 17, 13, 10, 9, 5];
const OTELCOL_SYSLOG_TEXT = ["emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"];

/** journalctl --unit: a name without a unit suffix means .service; matched here on _SYSTEMD_UNIT. */
function journalUnits(config: Record<string, unknown>): Set<string> {
  const units = (config.units as string[] | undefined) ?? [];
  return new Set(units.map((u) => (/\.[a-z]+$/.test(u) ? u : `${u}.service`)));
}

/** The record at the first processor of Runtime O for a source with this (validated) config, or null when the receiver delivers none. */
export function otelcolRecord(event: LogEvent, config: Record<string, unknown>): LogRecord | null {
  switch (event.kind) {
    case "otlp":
      return event.record;
    case "filelog": {
      const record: LogRecord = {
        body: str(event.line.replace(/^[\r\n\t ]+|[\r\n\t ]+$/g, "")),
        attributes: [{ key: "log.file.name", value: str(posix.basename(event.path)) }],
      };
      stanzaParse(record, config.parser as ParserConfig | undefined);
      return record;
    }
    case "journald": {
      const priority = event.fields.PRIORITY;
      if (priority === undefined || !/^[0-6]$/.test(priority)) return null; // journalctl --priority info
      const units = journalUnits(config);
      if (units.size > 0 && !units.has(event.fields._SYSTEMD_UNIT ?? "")) return null;
      return { body: { kvlistValue: { values: Object.entries(event.fields).map(([key, value]) => ({ key, value: str(value) })) } } };
    }
    case "syslog": {
      const attributes: KeyValue[] = [];
      const put = (key: string, value: AnyValue | undefined) => value !== undefined && attributes.push({ key, value });
      put("hostname", event.hostname === undefined ? undefined : str(event.hostname));
      put("appname", event.appname === undefined ? undefined : str(event.appname));
      put("proc_id", event.procId === undefined ? undefined : str(event.procId));
      put("msg_id", event.msgId === undefined ? undefined : str(event.msgId));
      put("message", event.message === undefined ? undefined : str(event.message));
      put("priority", int(event.facility * 8 + event.severity));
      put("facility", int(event.facility));
      put("facility_text", str(FACILITY_KEYWORDS[event.facility]!));
      if (event.protocol === "rfc5424") {
        put("version", int(1));
        if (event.structuredData) {
          const sd = Object.entries(event.structuredData).map(([id, params]) => ({
            key: id,
            value: { kvlistValue: { values: Object.entries(params).map(([k, v]) => ({ key: k, value: str(v) })) } },
          }));
          put("structured_data", { kvlistValue: { values: sd } });
        }
      }
      return {
        body: str(event.line),
        severityNumber: OTELCOL_SYSLOG_NUMBER[event.severity],
        severityText: OTELCOL_SYSLOG_TEXT[event.severity],
        attributes,
      };
    }
  }
}

/** A JSON value as pcommon holds it after stanza's json_parser or OTTL's ParseJSON (numbers as doubles). */
function fromJson(value: unknown): AnyValue {
  if (typeof value === "string") return str(value);
  if (typeof value === "number") return { doubleValue: value };
  if (typeof value === "boolean") return { boolValue: value };
  if (Array.isArray(value)) return { arrayValue: { values: value.map(fromJson) } };
  if (value !== null && typeof value === "object") return { kvlistValue: { values: Object.entries(value).map(([key, v]) => ({ key, value: fromJson(v) })) } };
  return {};
}

/** An RE2 pattern's named groups matched as JS does; the test patterns are written in the syntax both share. */
function namedGroups(pattern: string, text: string): Record<string, string> | null {
  const match = new RegExp(pattern.replaceAll("(?P<", "(?<"), "u").exec(text);
  return match ? Object.fromEntries(Object.entries(match.groups ?? {}).map(([k, v]) => [k, v ?? ""])) : null;
}

/** The parsed map, or null when the parser fails (stanza sends the record on unchanged; OTTL skips the statement). */
function parsedFields(format: string, pattern: string | undefined, body: string): KeyValue[] | null {
  if (format === "json") {
    try {
      const value = JSON.parse(body) as unknown;
      return value !== null && typeof value === "object" && !Array.isArray(value) ? (fromJson(value).kvlistValue!.values ?? []) : null;
    } catch {
      return null;
    }
  }
  const groups = namedGroups(pattern!, body);
  return groups === null ? null : Object.entries(groups).map(([key, v]) => ({ key, value: str(v) }));
}

/** The value at a parsed field's path (`log.level` is nested), or undefined. */
function fieldValue(record: LogRecord, path: readonly string[]): AnyValue | undefined {
  let values = record.attributes;
  let found: AnyValue | undefined;
  for (const key of path) {
    found = values?.find((kv) => kv.key === key)?.value;
    values = found?.kvlistValue?.values;
  }
  return found;
}

/** OTTL's String() of a scalar, as pcommon's AsString prints it; undefined for what svc's model does not need. */
function ottlString(value: AnyValue | undefined): string | undefined {
  if (value?.stringValue !== undefined) return value.stringValue;
  if (value?.intValue !== undefined) return String(value.intValue);
  if (value?.doubleValue !== undefined) return String(Number(value.doubleValue));
  if (value?.boolValue !== undefined) return String(value.boolValue);
  return undefined;
}

/** stanza's severity parser with the default preset (helper/severity.go): the value lower-cased, a whole double as its integer. */
function stanzaSeverity(record: LogRecord, value: AnyValue | undefined): void {
  if (value === undefined) return;
  let text: string;
  if (value.stringValue !== undefined) text = value.stringValue;
  else if (value.doubleValue !== undefined && Number.isInteger(Number(value.doubleValue))) text = String(Number(value.doubleValue));
  else return; // another type, or a fraction: an error, neither is set
  const mapped = STANZA_DEFAULT_SEVERITIES.find((s) => s.values.includes(text.toLowerCase()));
  record.severityNumber = mapped ? SEVERITY_NUMBERS.get(mapped.number)! : 0;
  record.severityText = text;
}

/** Runtime O's parser operator over a filelog record (timestamps are not modelled: no filter here reads time). */
function stanzaParse(record: LogRecord, parser: ParserConfig | undefined): void {
  if (parser === undefined || parser.format === "none") return;
  const fields = parsedFields(parser.format, parser.regex, record.body!.stringValue!);
  if (fields === null) return;
  for (const kv of fields) setAttribute(record, kv.key, kv.value!);
  if (parser.severity.field !== undefined) stanzaSeverity(record, fieldValue(record, parser.severity.field.split(".")));
}

// ---- Runtime R: loki.source.*, then svc's Alloy blocks ----------------------------------------

/** leodido/go-syslog SeverityLevels: the value of __syslog_message_severity. */
const GO_SYSLOG_SEVERITY = ["emergency", "alert", "critical", "error", "warning", "notice", "informational", "debug"];

interface LokiEntry {
  labels: Map<string, string>;
  line: string;
}

/** What the loki.source component emits before its relabel rules (internal labels included), or null when it skips the event. */
function lokiEntry(event: Exclude<LogEvent, OtlpEvent>, label: string): LokiEntry | null {
  switch (event.kind) {
    case "filelog":
      return { labels: new Map([["filename", event.path]]), line: event.line.replace(/\r$/, "") };
    case "journald": {
      const labels = new Map([["job", `loki.source.journal.${label}`]]);
      for (const [name, value] of Object.entries(event.fields)) labels.set(`__journal_${name.toLowerCase()}`, value);
      const line = event.fields.MESSAGE ?? "";
      return line === "" ? null : { labels, line };
    }
    case "syslog": {
      if (event.message === undefined) return null;
      const labels = new Map<string, string>([
        ["__syslog_message_severity", GO_SYSLOG_SEVERITY[event.severity]!],
        ["__syslog_message_facility", FACILITY_KEYWORDS[event.facility]!],
      ]);
      const set = (name: string, value: string | undefined) => value !== undefined && labels.set(name, value);
      set("__syslog_message_hostname", event.hostname);
      set("__syslog_message_app_name", event.appname);
      set("__syslog_message_proc_id", event.procId);
      set("__syslog_message_msg_id", event.msgId);
      return { labels, line: event.message };
    }
  }
}

function isBlock(name: string) {
  return (s: AlloyStatement): s is AlloyBlock => s.kind === "block" && s.name === name;
}

function findBlock(blocks: readonly AlloyBlock[], name: string): AlloyBlock | undefined {
  return blocks.find((b) => b.name === name);
}

function attrValue(b: AlloyBlock | undefined, name: string): unknown {
  const a = b?.body.find((s) => s.kind === "attribute" && s.name === name);
  return a && a.kind === "attribute" ? a.value : undefined;
}

/** Prometheus relabelling as loki.relabel runs it: keep and replace (the defaults: regex (.*), replacement $1). False: dropped. */
function relabel(labels: Map<string, string>, rules: readonly AlloyBlock[]): boolean {
  for (const rule of rules) {
    const sources = (attrValue(rule, "source_labels") as string[] | undefined) ?? [];
    const value = sources.map((s) => labels.get(s) ?? "").join(";");
    const regex = new RegExp(`^(?:${(attrValue(rule, "regex") as string | undefined) ?? "(.*)"})$`);
    const action = (attrValue(rule, "action") as string | undefined) ?? "replace";
    const match = regex.exec(value);
    if (action === "keep") {
      if (!match) return false;
    } else if (action === "replace") {
      if (!match) continue;
      const target = attrValue(rule, "target_label") as string;
      const replacement = ((attrValue(rule, "replacement") as string | undefined) ?? "$1").replace(/\$(\d)/g, (_, i) => match[Number(i)] ?? "");
      if (replacement === "") labels.delete(target);
      else labels.set(target, replacement);
    } else {
      throw new Error(`relabel action ${action} is not modelled`);
    }
  }
  return true;
}

/** Alloy's otelcol.receiver.loki: body = line, labels as string attributes, the label-names hint, file path and name from filename. */
function fromLoki(entry: LokiEntry): LogRecord {
  const attributes: KeyValue[] = [];
  const filename = entry.labels.get("filename");
  if (filename !== undefined) {
    attributes.push({ key: "log.file.path", value: str(filename) }, { key: "log.file.name", value: str(posix.basename(filename)) });
  }
  if (entry.labels.size > 0) attributes.push({ key: "loki.attribute.labels", value: str([...entry.labels.keys()].join(",")) });
  for (const [key, value] of entry.labels) attributes.push({ key, value: str(value) });
  return { body: str(entry.line), attributes };
}

/** Splits `a, "b, c", d` at top-level commas. */
function args(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === "\\") i++;
      else if (c === '"') quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === "(" || c === "[") depth++;
    else if (c === ")" || c === "]") depth--;
    else if (c === "," && depth === 0) {
      out.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  out.push(text.slice(start).trim());
  return out;
}

function setAttribute(record: LogRecord, key: string, value: AnyValue): void {
  const list = (record.attributes ??= []);
  const at = list.findIndex((kv) => kv.key === key);
  if (at >= 0) list[at] = { key, value };
  else list.push({ key, value });
}

/** `attributes["a"]["b"]` → ["a", "b"]. */
function pathOf(text: string): string[] {
  return [...text.matchAll(/\["((?:[^"\\]|\\.)*)"\]/g)].map((m) => JSON.parse(`"${m[1]}"`) as string);
}

/**
 * The parsing statements of filelog-parse.ts, interpreted: merge_maps of
 * ParseJSON / ExtractPatterns, Time (not modelled, as on Runtime O), and the
 * severity mapping, whose converters the OTTL condition module does not have.
 * True when the statement was one of them.
 */
function runParseStatement(statement: string, record: LogRecord): boolean {
  const merge = /^merge_maps\(attributes, (?:ParseJSON\(body\)|ExtractPatterns\(body, ("(?:[^"\\]|\\.)*")\)), "upsert"\)$/.exec(statement);
  if (merge) {
    const fields = parsedFields(merge[1] === undefined ? "json" : "regex", merge[1] && (JSON.parse(merge[1]) as string), record.body?.stringValue ?? "");
    for (const kv of fields ?? []) setAttribute(record, kv.key, kv.value!);
    return true;
  }
  if (statement.startsWith("set(time, Time(")) return true;
  const number = /^set\(severity_number, (SEVERITY_NUMBER_\w+)\) where ConvertCase\(String\((attributes\[.*?\])\), "lower"\) == /.exec(statement);
  if (number) {
    const text = ottlString(fieldValue(record, pathOf(number[2]!)))?.toLowerCase();
    const values = [...statement.matchAll(/== ("(?:[^"\\]|\\.)*")/g)].map((m) => JSON.parse(m[1]!) as string);
    if (text !== undefined && values.includes(text)) record.severityNumber = SEVERITY_NUMBERS.get(number[1]!)!;
    return true;
  }
  const text = /^set\(severity_text, String\((attributes\[.*?\])\)\) where IsString\(/.exec(statement);
  if (text) {
    const value = fieldValue(record, pathOf(text[1]!));
    const whole = value?.doubleValue !== undefined && Number.isInteger(Number(value.doubleValue));
    if (value?.stringValue !== undefined || value?.intValue !== undefined || whole) record.severityText = ottlString(value);
    return true;
  }
  return false;
}

/** The few OTTL editors the shaping transforms use, run as the transform processor runs a log statement. */
function runStatement(statement: string, record: LogRecord): void {
  if (runParseStatement(statement, record)) return;
  const [call, where] = statement.split(" where ") as [string, string | undefined];
  const view: LogView = { log: record, scope: undefined, resource: undefined };
  if (where !== undefined && !compileCondition(where)(view)) return;
  const m = /^([a-z_]+)\((.*)\)$/.exec(call);
  if (!m) throw new Error(`statement not modelled: ${statement}`);
  const [name, argText] = [m[1]!, m[2]!];
  const [target, ...rest] = args(argText);
  const value = (text: string): AnyValue | null => {
    if (text.startsWith('"')) return str(JSON.parse(text) as string);
    if (text === "body") return record.body!;
    if (SEVERITY_NUMBERS.has(text)) return int(SEVERITY_NUMBERS.get(text)!);
    if (/^\d+$/.test(text)) return int(Number(text));
    const path = /^attributes\["((?:[^"\\]|\\.)*)"\]$/.exec(text);
    if (path) return fieldValue(record, [JSON.parse(`"${path[1]}"`) as string]) ?? null;
    // `attributes["k"] * a + b`, integer math: a missing or non-integer operand is an error, skipped (error_mode ignore).
    const math = /^attributes\["((?:[^"\\]|\\.)*)"\] \* (\d+) \+ (\d+)$/.exec(text);
    if (math) {
      const operand = fieldValue(record, [JSON.parse(`"${math[1]}"`) as string])?.intValue;
      return operand === undefined ? null : int(Number(operand) * Number(math[2]) + Number(math[3]));
    }
    throw new Error(`value not modelled: ${text}`);
  };
  const attribute = /^attributes\["(.*)"\]$/.exec(target!);
  switch (name) {
    case "set": {
      const v = value(rest[0]!);
      if (v === null) return; // set with a nil value changes nothing; a failed expression skips the statement
      if (target === "severity_number") record.severityNumber = Number(v.intValue);
      else if (target === "severity_text") record.severityText = v.stringValue;
      else if (target === "body") record.body = v;
      else if (attribute) setAttribute(record, JSON.parse(`"${attribute[1]}"`) as string, v);
      else throw new Error(`set target not modelled: ${target}`);
      return;
    }
    case "delete_key": {
      const key = JSON.parse(rest[0]!) as string;
      if (target !== "attributes") throw new Error(`delete_key target not modelled: ${target}`);
      record.attributes = (record.attributes ?? []).filter((kv) => kv.key !== key);
      return;
    }
    case "replace_pattern": {
      if (target !== "body" || record.body?.stringValue === undefined) return;
      const re = compileRe2(JSON.parse(rest[0]!) as string);
      record.body = str(record.body.stringValue.replace(new RegExp(re.source, `${re.flags}g`), JSON.parse(rest[1]!) as string));
      return;
    }
    default:
      throw new Error(`editor not modelled: ${name}`);
  }
}

/**
 * The record at the first processor of Runtime R, given the blocks svc
 * renders for the source (`sourceType.alloy(config, label, output)`), or
 * null when the chain delivers none.
 */
export function alloyRecord(event: LogEvent, label: string, blocks: readonly AlloyBlock[]): LogRecord | null {
  if (event.kind === "otlp") return event.record;
  const entry = lokiEntry(event, label);
  if (entry === null) return null;
  const rules = findBlock(blocks, "loki.relabel")?.body.filter(isBlock("rule")) ?? [];
  if (event.kind !== "filelog" && !relabel(entry.labels, rules)) return null;
  for (const name of [...entry.labels.keys()]) if (name.startsWith("__")) entry.labels.delete(name);
  const record = fromLoki(entry);
  const transform = findBlock(blocks, "otelcol.processor.transform");
  const statements =
    transform?.body.filter(isBlock("log_statements")).flatMap((b) => (attrValue(b, "statements") as { text: string }[] | undefined) ?? []) ?? [];
  for (const s of statements) runStatement(typeof s === "string" ? s : s.text, record);
  return record;
}
