/**
 * OTTL values read from OTLP JSON and the collector's rules for them:
 * comparison (Go's ottl compare.go) and the string form IsMatch matches
 * against (its StringLikeGetter: JSON for maps and lists, hex for bytes).
 */
import type { CompareOp } from "./ast.ts";
import { OttlEvalError } from "./errors.ts";
import type { AnyValue, KeyValue } from "./otlp.ts";

/**
 * A value as conditions see it. Strings, numbers (ints as number, or bigint
 * beyond 2^53), bools and nil are plain; maps, lists and bytes stay their
 * AnyValue, compared by identity as Go compares pcommon.Map.
 */
export type OttlValue = string | number | bigint | boolean | null | AnyValue;

export type Kind = "string" | "int" | "double" | "bool" | "map" | "list" | "bytes" | "nil";

export function kindOf(value: AnyValue | undefined): Kind {
  if (value === undefined) return "nil";
  if (value.stringValue !== undefined) return "string";
  if (value.intValue !== undefined) return "int";
  if (value.doubleValue !== undefined) return "double";
  if (value.boolValue !== undefined) return "bool";
  if (value.kvlistValue !== undefined) return "map";
  if (value.arrayValue !== undefined) return "list";
  if (value.bytesValue !== undefined) return "bytes";
  return "nil";
}

/** OTLP JSON sends int64 as a decimal string; beyond 2^53 it stays exact as a bigint. */
export function toInt(value: number | string): number | bigint {
  if (typeof value === "number") return value;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : BigInt(value);
}

export function fromAny(value: AnyValue | undefined): OttlValue {
  if (value === undefined) return null;
  const s = value.stringValue;
  if (s !== undefined) return s;
  if (value.intValue !== undefined) return toInt(value.intValue);
  if (value.doubleValue !== undefined) return Number(value.doubleValue);
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.kvlistValue !== undefined || value.arrayValue !== undefined || value.bytesValue !== undefined) return value;
  return null;
}

/** The value of the first entry with `key`; undefined when there is none. */
export function lookup(entries: KeyValue[] | undefined, key: string): AnyValue | undefined {
  if (entries === undefined) return undefined;
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!;
    if (entry.key === key) return entry.value ?? EMPTY;
  }
  return undefined;
}

/** pdata's empty value (a key with no value, an absent body): nil to read, an error to index. */
export const EMPTY: AnyValue = Object.freeze({});

/**
 * One `[key]` step into a value, with the collector's errors: a map takes a
 * string, a list an in-range int, anything else no key. A missing map key is
 * undefined (nil), which ends the walk.
 */
export function index(value: AnyValue | undefined, key: string | number): AnyValue | undefined {
  const map = value?.kvlistValue;
  if (map !== undefined) {
    if (typeof key !== "string") throw new OttlEvalError("a map must be indexed by a string");
    return lookup(map.values, key);
  }
  const list = value?.arrayValue;
  if (list !== undefined) {
    if (typeof key !== "number") throw new OttlEvalError("a list must be indexed by an int");
    const item = list.values?.[key];
    if (item === undefined || key < 0) throw new OttlEvalError(`index ${key} is out of bounds`);
    return item;
  }
  throw new OttlEvalError(`a ${kindOf(value)} value cannot be indexed`);
}

const isBytes = (v: OttlValue): v is AnyValue & { bytesValue: string } => typeof v === "object" && v !== null && v.bytesValue !== undefined;

/** Go's `compare`: mismatched types are unequal, and only != is true of them. */
export function compare(a: OttlValue, b: OttlValue, op: CompareOp): boolean {
  if (a === null || b === null) return a === b ? op === "==" || op === "<=" || op === ">=" : op === "!=";
  switch (typeof a) {
    case "string":
      return typeof b === "string" ? ordered(codePointOrder(a, b), op) : op === "!=";
    case "number":
    case "bigint":
      return typeof b === "number" || typeof b === "bigint" ? compareNumbers(a, b, op) : op === "!=";
    case "boolean":
      if (typeof b !== "boolean") return op === "!=";
      return ordered(Number(a) - Number(b), op);
    default:
      if (isBytes(a) && isBytes(b)) return ordered(Buffer.compare(bytes(a.bytesValue), bytes(b.bytesValue)), op);
      if (op === "==") return a === b;
      return op === "!=" && a !== b;
  }
}

/** Relational operators compare number with bigint exactly; NaN compares false, as in Go. */
function compareNumbers(a: number | bigint, b: number | bigint, op: CompareOp): boolean {
  switch (op) {
    case "==":
      // biome-ignore lint/suspicious/noDoubleEquals: number == bigint compares the values exactly (1 == 1n); === would be false
      return a == b;
    case "!=":
      // biome-ignore lint/suspicious/noDoubleEquals: as above
      return a != b;
    case "<":
      return a < b;
    case "<=":
      return a <= b;
    case ">":
      return a > b;
    case ">=":
      return a >= b;
  }
}

function ordered(order: number, op: CompareOp): boolean {
  switch (op) {
    case "==":
      return order === 0;
    case "!=":
      return order !== 0;
    case "<":
      return order < 0;
    case "<=":
      return order <= 0;
    case ">":
      return order > 0;
    case ">=":
      return order >= 0;
  }
}

/** Go compares strings by UTF-8 bytes, which is code point order; JS's < is UTF-16 order. */
export function codePointOrder(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs && !ys && y >= 0xe000) return 1;
    if (ys && !xs && x >= 0xe000) return -1;
    return x - y;
  }
  return a.length - b.length;
}

function bytes(base64: string): Buffer {
  return Buffer.from(base64, "base64");
}

/** The string IsMatch sees: nil stays nil, bytes become hex, maps and lists Go's JSON. */
export function stringLike(value: OttlValue): string | null {
  if (value === null || typeof value === "string") return value;
  if (typeof value === "object") {
    if (isBytes(value)) return bytes(value.bytesValue).toString("hex");
    return goJson(value);
  }
  if (typeof value === "number") return goNumber(value);
  return String(value);
}

function goNumber(n: number): string {
  if (!Number.isFinite(n)) throw new OttlEvalError(`the value ${n} has no JSON form`);
  return Object.is(n, -0) ? "-0" : String(n);
}

/**
 * Go's json.Marshal of the value's raw form: map keys sorted (a repeated key
 * keeps its last value), bytes as base64, and Go's HTML-safe escaping.
 */
function goJson(value: AnyValue): string {
  const kind = kindOf(value);
  switch (kind) {
    case "nil":
      return "null";
    case "string":
      return goString(value.stringValue!);
    case "bytes":
      return `"${bytes(value.bytesValue!).toString("base64")}"`;
    case "map": {
      const entries = new Map<string, AnyValue | undefined>();
      for (const kv of value.kvlistValue!.values ?? []) entries.set(kv.key, kv.value);
      const keys = [...entries.keys()].sort(codePointOrder);
      return `{${keys.map((k) => `${goString(k)}:${goJson(entries.get(k) ?? EMPTY)}`).join(",")}}`;
    }
    case "list":
      return `[${(value.arrayValue!.values ?? []).map(goJson).join(",")}]`;
    default:
      return stringLike(fromAny(value))!;
  }
}

const GO_ESCAPES: Record<string, string> = {
  '"': '\\"',
  "\\": "\\\\",
  "\n": "\\n",
  "\r": "\\r",
  "\t": "\\t",
  "\b": "\\b",
  "\f": "\\f",
  "<": "\\u003c",
  ">": "\\u003e",
  "&": "\\u0026",
  "\u2028": "\\u2028",
  "\u2029": "\\u2029",
};

function goString(s: string): string {
  return `"${s.replace(/["\\<>&\u2028\u2029\u0000-\u001f]/g, (c) => GO_ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)}"`;
}
