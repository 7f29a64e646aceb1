/**
 * OTLP JSON logs (the protobuf JSON mapping: lowerCamelCase keys, int64 as
 * a number or a decimal string, ids as hex) and the check that an input has
 * that shape. The check names the JSON path of the first problem; a valid
 * input is used as it is, never copied.
 */
import { ValidationError } from "../errors.ts";
import { SEVERITY_NUMBERS } from "./contexts.ts";

export interface AnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number | string;
  doubleValue?: number | string;
  bytesValue?: string;
  arrayValue?: { values?: AnyValue[] };
  kvlistValue?: { values?: KeyValue[] };
}

export interface KeyValue {
  key: string;
  value?: AnyValue;
}

export interface Resource {
  attributes?: KeyValue[];
  droppedAttributesCount?: number;
}

export interface InstrumentationScope {
  name?: string;
  version?: string;
  attributes?: KeyValue[];
  droppedAttributesCount?: number;
}

export interface LogRecord {
  timeUnixNano?: string | number;
  observedTimeUnixNano?: string | number;
  severityNumber?: number | string;
  severityText?: string;
  body?: AnyValue;
  attributes?: KeyValue[];
  droppedAttributesCount?: number;
  flags?: number;
  traceId?: string;
  spanId?: string;
  eventName?: string;
}

export interface ScopeLogs {
  scope?: InstrumentationScope;
  logRecords?: LogRecord[];
  schemaUrl?: string;
}

export interface ResourceLogs {
  resource?: Resource;
  scopeLogs?: ScopeLogs[];
  schemaUrl?: string;
}

export interface LogsData {
  resourceLogs: ResourceLogs[];
}

const ANY_VALUE_KEYS = ["stringValue", "boolValue", "intValue", "doubleValue", "arrayValue", "kvlistValue", "bytesValue"] as const;

/** Protobuf nests messages at most 100 deep by default; so do we, which keeps the recursion bounded. */
const MAX_DEPTH = 100;
const HEX = /^[0-9a-fA-F]+$/;
const DOUBLE_WORDS = new Set(["NaN", "Infinity", "-Infinity"]);
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/** A problem: the path below the current value, and what is wrong. */
type Problem = { path: string; message: string } | null;

const at = (path: string, problem: Problem): Problem => problem && { path: path + problem.path, message: problem.message };

/** Also counts the records: the caller needs the number and this walk visits them all anyway. */
export function validateLogs(input: unknown): { logs: LogsData; records: number } {
  let records = 0;
  const problem = (() => {
    if (!isObject(input)) return { path: "", message: "must be an object with resourceLogs (OTLP JSON logs)" };
    const resourceLogs = input.resourceLogs;
    if (!Array.isArray(resourceLogs)) return { path: ".resourceLogs", message: "must be an array" };
    for (let r = 0; r < resourceLogs.length; r++) {
      const rl: unknown = resourceLogs[r];
      const here = `.resourceLogs[${r}]`;
      if (!isObject(rl)) return { path: here, message: "must be an object" };
      let p = optional(rl, "resource", resource) ?? optional(rl, "schemaUrl", string);
      if (p) return at(here, p);
      const scopeLogs = rl.scopeLogs;
      if (scopeLogs === undefined) continue;
      if (!Array.isArray(scopeLogs)) return { path: `${here}.scopeLogs`, message: "must be an array" };
      for (let s = 0; s < scopeLogs.length; s++) {
        const sl: unknown = scopeLogs[s];
        const there = `${here}.scopeLogs[${s}]`;
        if (!isObject(sl)) return { path: there, message: "must be an object" };
        p = optional(sl, "scope", scope) ?? optional(sl, "schemaUrl", string);
        if (p) return at(there, p);
        const logRecords = sl.logRecords;
        if (logRecords === undefined) continue;
        if (!Array.isArray(logRecords)) return { path: `${there}.logRecords`, message: "must be an array" };
        for (let i = 0; i < logRecords.length; i++) {
          p = logRecord(logRecords[i]);
          if (p) return at(`${there}.logRecords[${i}]`, p);
        }
        records += logRecords.length;
      }
    }
    return null;
  })();
  if (problem) {
    const path = `input${problem.path}`;
    throw new ValidationError(`The dry-run input is not valid: ${path}: ${problem.message}.`, [{ path, message: problem.message }]);
  }
  return { logs: input as LogsData, records };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

type Check = (value: unknown) => Problem;

/** Checks `object[key]` when present; the path is only built for a problem. */
function optional(object: Record<string, unknown>, key: string, check: Check): Problem {
  const value = object[key];
  if (value === undefined) return null;
  const problem = check(value);
  return problem && { path: `.${key}${problem.path}`, message: problem.message };
}

const string: Check = (v) => (typeof v === "string" ? null : { path: "", message: "must be a string" });

const uint32: Check = (v) =>
  typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= 0xffffffff ? null : { path: "", message: "must be an integer from 0 to 4294967295" };

/** Whether `s[from..]` is decimal digits not above `max` (at equal length, text order is numeric order). */
function digitsAtMost(s: string, from: number, max: string): boolean {
  const n = s.length - from;
  if (n < 1 || n > max.length) return false;
  for (let i = from; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return n < max.length || s.slice(from) <= max;
}

const uint64: Check = (v) =>
  (typeof v === "number" && Number.isInteger(v) && v >= 0) || (typeof v === "string" && digitsAtMost(v, 0, "18446744073709551615"))
    ? null
    : { path: "", message: "must be a non-negative integer (a number or a decimal string)" };

function isInt64(v: unknown): boolean {
  if (typeof v === "number") return Number.isInteger(v) && Math.abs(v) <= 2 ** 63;
  if (typeof v !== "string") return false;
  return v.startsWith("-") ? digitsAtMost(v, 1, "9223372036854775808") : digitsAtMost(v, 0, "9223372036854775807");
}

const hexId =
  (bytes: number): Check =>
  (v) =>
    typeof v === "string" && (v === "" || (v.length === bytes * 2 && HEX.test(v))) ? null : { path: "", message: `must be ${bytes * 2} hex digits` };
const traceId = hexId(16);
const spanId = hexId(8);

const severityNumber: Check = (v) =>
  (typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= 24) || (typeof v === "string" && SEVERITY_NUMBERS.has(v))
    ? null
    : { path: "", message: "must be an integer from 0 to 24 or a name such as SEVERITY_NUMBER_INFO" };

function keyValues(value: unknown, depth: number): Problem {
  if (!Array.isArray(value)) return { path: "", message: "must be an array of {key, value}" };
  for (let i = 0; i < value.length; i++) {
    const kv: unknown = value[i];
    if (!isObject(kv)) return { path: `[${i}]`, message: "must be an object with key and value" };
    if (typeof kv.key !== "string") return { path: `[${i}].key`, message: "must be a string" };
    if (kv.value !== undefined) {
      const p = anyValue(kv.value, depth);
      if (p) return at(`[${i}].value`, p);
    }
  }
  return null;
}

const attributes: Check = (v) => keyValues(v, 0);

const resource: Check = (v) => {
  if (!isObject(v)) return { path: "", message: "must be an object" };
  return optional(v, "attributes", attributes) ?? optional(v, "droppedAttributesCount", uint32);
};

const scope: Check = (v) => {
  if (!isObject(v)) return { path: "", message: "must be an object" };
  return (
    optional(v, "name", string) ?? optional(v, "version", string) ?? optional(v, "attributes", attributes) ?? optional(v, "droppedAttributesCount", uint32)
  );
};

/**
 * The hot path, one call per record: fields are read by name here, because a
 * computed key (`object[key]`) read at one shared site is several times slower.
 */
function logRecord(v: unknown): Problem {
  if (!isObject(v)) return { path: "", message: "must be an object" };
  return (
    field(".body", v.body, body) ??
    field(".attributes", v.attributes, attributes) ??
    field(".severityText", v.severityText, string) ??
    field(".severityNumber", v.severityNumber, severityNumber) ??
    field(".timeUnixNano", v.timeUnixNano, uint64) ??
    field(".observedTimeUnixNano", v.observedTimeUnixNano, uint64) ??
    field(".traceId", v.traceId, traceId) ??
    field(".spanId", v.spanId, spanId) ??
    field(".flags", v.flags, uint32) ??
    field(".droppedAttributesCount", v.droppedAttributesCount, uint32) ??
    field(".eventName", v.eventName, string)
  );
}

function field(path: string, value: unknown, check: Check): Problem {
  return value === undefined ? null : at(path, check(value));
}

const body: Check = (v) => anyValue(v, 0);

/** The one value key an AnyValue sets (undefined for none), or null when it sets several. */
function valueKey(v: Record<string, unknown>): (typeof ANY_VALUE_KEYS)[number] | undefined | null {
  // Direct property reads: several times faster than looping over the key names.
  let key: (typeof ANY_VALUE_KEYS)[number] | undefined;
  let n = 0;
  if (v.stringValue !== undefined) (key = "stringValue"), n++;
  if (v.intValue !== undefined) (key = "intValue"), n++;
  if (v.boolValue !== undefined) (key = "boolValue"), n++;
  if (v.doubleValue !== undefined) (key = "doubleValue"), n++;
  if (v.kvlistValue !== undefined) (key = "kvlistValue"), n++;
  if (v.arrayValue !== undefined) (key = "arrayValue"), n++;
  if (v.bytesValue !== undefined) (key = "bytesValue"), n++;
  return n > 1 ? null : key;
}

function anyValue(v: unknown, depth: number): Problem {
  if (!isObject(v)) return { path: "", message: 'must be an AnyValue object such as {"stringValue": "..."}' };
  if (depth >= MAX_DEPTH) return { path: "", message: `values nest more than ${MAX_DEPTH} deep` };
  const set = valueKey(v);
  if (set === null) {
    const [first, second] = ANY_VALUE_KEYS.filter((k) => v[k] !== undefined);
    return { path: "", message: `sets both ${first} and ${second}; an AnyValue holds one` };
  }
  const x = set === undefined ? undefined : v[set];
  switch (set) {
    case undefined:
      return null;
    case "stringValue":
      return typeof x === "string" ? null : { path: ".stringValue", message: "must be a string" };
    case "boolValue":
      return typeof x === "boolean" ? null : { path: ".boolValue", message: "must be true or false" };
    case "intValue":
      return isInt64(x) ? null : { path: ".intValue", message: "must be a 64-bit integer (a number or a decimal string)" };
    case "doubleValue":
      return typeof x === "number" || (typeof x === "string" && (DOUBLE_WORDS.has(x) || (x.trim() !== "" && !Number.isNaN(Number(x)))))
        ? null
        : { path: ".doubleValue", message: "must be a number" };
    case "bytesValue":
      return typeof x === "string" && BASE64.test(x) ? null : { path: ".bytesValue", message: "must be a base64 string" };
    case "arrayValue": {
      if (!isObject(x)) return { path: ".arrayValue", message: "must be an object with values" };
      const values = x.values;
      if (values === undefined) return null;
      if (!Array.isArray(values)) return { path: ".arrayValue.values", message: "must be an array" };
      for (let i = 0; i < values.length; i++) {
        const p = anyValue(values[i], depth + 1);
        if (p) return at(`.arrayValue.values[${i}]`, p);
      }
      return null;
    }
    case "kvlistValue": {
      if (!isObject(x)) return { path: ".kvlistValue", message: "must be an object with values" };
      return x.values === undefined ? null : at(".kvlistValue.values", keyValues(x.values, depth + 1));
    }
  }
}
