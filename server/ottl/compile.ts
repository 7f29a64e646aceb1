/**
 * Turns a log-context condition into a closure over OTLP JSON, built once:
 * per record there is no tree walking and, for strings, bools and ints, no
 * allocation. Semantics are the collector's: a missing attribute is nil,
 * mismatched types are unequal, IsMatch sees the string form of non-strings.
 * A record the condition cannot be evaluated on (indexing a string, say)
 * throws OttlEvalError; the filter's error_mode decides what that means.
 */
import type { Call, CompareOp, Condition, Value } from "./ast.ts";
import { SEVERITY_NUMBERS } from "./contexts.ts";
import type { AnyValue, InstrumentationScope, LogRecord, Resource } from "./otlp.ts";
import { parseCondition } from "./parser.ts";
import { compileRe2 } from "./regex.ts";
import { compare, EMPTY, fromAny, index, kindOf, lookup, stringLike, type Kind, type OttlValue } from "./values.ts";

/**
 * One log record and what encloses it, read in place. A caller evaluating
 * many records sets the fields of one view per record instead of making a
 * new one.
 */
export interface LogView {
  log: LogRecord;
  scope: InstrumentationScope | undefined;
  resource: Resource | undefined;
}

export type LogPredicate = (view: LogView) => boolean;

/** Compiles a condition for log records; throws OttlError if it does not parse. */
export function compileCondition(source: string, context: "log" = "log"): LogPredicate {
  return compileParsed(parseCondition(source, context));
}

/** Compiles a parsed log-context condition (a transform statement's `where`). */
export function compileConditionTree(condition: Condition): LogPredicate {
  return compileParsed(condition);
}

/**
 * A log-context value as the AnyValue an editor writes (`set`'s value); undefined for
 * nil, which `set` leaves alone. Throws OttlEvalError where reading it does.
 */
export function compileValue(value: Value): (v: LogView) => AnyValue | undefined {
  const op = operand(value);
  if (op.any) return op.any;
  return (v) => {
    const got = op.get(v);
    switch (op.kind(v)) {
      case "string":
        return { stringValue: got as string };
      case "int":
        return { intValue: String(got) };
      case "double":
        return { doubleValue: got as number };
      case "bool":
        return { boolValue: got as boolean };
      default:
        return undefined;
    }
  };
}

function compileParsed(condition: Condition): LogPredicate {
  switch (condition.kind) {
    case "or": {
      const fs = condition.operands.map(compileParsed);
      if (fs.length === 2) {
        const [a, b] = fs as [LogPredicate, LogPredicate];
        return (v) => a(v) || b(v);
      }
      return (v) => {
        for (let i = 0; i < fs.length; i++) if (fs[i]!(v)) return true;
        return false;
      };
    }
    case "and": {
      const fs = condition.operands.map(compileParsed);
      if (fs.length === 2) {
        const [a, b] = fs as [LogPredicate, LogPredicate];
        return (v) => a(v) && b(v);
      }
      return (v) => {
        for (let i = 0; i < fs.length; i++) if (!fs[i]!(v)) return false;
        return true;
      };
    }
    case "not": {
      const f = compileParsed(condition.operand);
      return (v) => !f(v);
    }
    case "bool": {
      const value = condition.value;
      return () => value;
    }
    case "call":
      return compileCall(condition.call);
    case "compare":
      return compileCompare(condition.op, condition.left, condition.right);
  }
}

/** How a compiled value is read. `any` is set for values that are an OTLP AnyValue. */
interface Operand {
  get: (v: LogView) => OttlValue;
  kind: (v: LogView) => Kind;
  any?: (v: LogView) => AnyValue | undefined;
  constant?: OttlValue;
}

function compileCompare(op: CompareOp, left: Value, right: Value): LogPredicate {
  const l = operand(left);
  const r = operand(right);
  // The common shapes, attributes["k"] == "literal" and the like, skip the general compare.
  const [side, fixed] = r.constant !== undefined ? [l, r.constant] : [r, l.constant];
  const simple = typeof fixed === "string" || typeof fixed === "boolean" || fixed === null;
  if ((op === "==" || op === "!=") && simple && side.constant === undefined) {
    const eq = op === "==";
    const any = side.any;
    if (any && typeof fixed === "string") {
      return eq ? (v) => any(v)?.stringValue === fixed : (v) => any(v)?.stringValue !== fixed;
    }
    const get = side.get;
    return eq ? (v) => get(v) === fixed : (v) => get(v) !== fixed;
  }
  const lget = l.get;
  const rget = r.get;
  return (v) => compare(lget(v), rget(v), op);
}

function compileCall(call: Call): LogPredicate {
  const target = operand(call.args[0]!);
  if (call.name === "IsMatch") {
    const re = compileRe2((call.args[1] as { value: string }).value);
    const any = target.any;
    if (any) {
      return (v) => {
        const value = any(v);
        if (value === undefined) return false;
        const s = value.stringValue;
        if (s !== undefined) return re.test(s);
        const text = stringLike(fromAny(value));
        return text !== null && re.test(text);
      };
    }
    const get = target.get;
    return (v) => {
      const text = stringLike(get(v));
      return text !== null && re.test(text);
    };
  }
  const wanted = IS_KIND[call.name]!;
  const kind = target.kind;
  return (v) => kind(v) === wanted;
}

const IS_KIND: Record<string, Kind> = {
  IsString: "string",
  IsInt: "int",
  IsDouble: "double",
  IsBool: "bool",
  IsMap: "map",
  IsList: "list",
};

function constant(value: OttlValue, kind: Kind): Operand {
  return { get: () => value, kind: () => kind, constant: value };
}

function operand(value: Value): Operand {
  switch (value.kind) {
    case "literal": {
      const v = value.value;
      if (typeof v === "bigint") return constant(Number.isSafeInteger(Number(v)) ? Number(v) : v, "int");
      if (typeof v === "number") return constant(v, "double");
      if (typeof v === "string") return constant(v, "string");
      if (typeof v === "boolean") return constant(v, "bool");
      return constant(null, "nil");
    }
    case "enum":
      return constant(SEVERITY_NUMBERS.get(value.name)!, "int");
    case "call": {
      // The call still runs for its kind: IsBool(IsMatch(...)) fails wherever IsMatch fails.
      const f = compileCall(value);
      return {
        get: f,
        kind: (v) => {
          f(v);
          return "bool";
        },
      };
    }
    case "path":
      return LOG_PATHS[value.fields.join(".")]!(value.keys.map((k) => (typeof k === "bigint" ? Number(k) : k)));
  }
}

type Keys = (string | number)[];

/** A getter per log-context path (see contexts.ts); the parser has checked the keys. */
const LOG_PATHS: Record<string, (keys: Keys) => Operand> = {
  severity_text: () => ({ get: (v) => v.log.severityText ?? "", kind: () => "string" }),
  severity_number: () => ({ get: (v) => severityNumber(v.log.severityNumber), kind: () => "int" }),
  time_unix_nano: () => ({ get: (v) => int64(v.log.timeUnixNano), kind: () => "int" }),
  observed_time_unix_nano: () => ({ get: (v) => int64(v.log.observedTimeUnixNano), kind: () => "int" }),
  flags: () => ({ get: (v) => v.log.flags ?? 0, kind: () => "int" }),
  dropped_attributes_count: () => ({ get: (v) => v.log.droppedAttributesCount ?? 0, kind: () => "int" }),
  // hex.EncodeToString of the id: lower case, all zeros when unset.
  "trace_id.string": () => ({ get: (v) => (v.log.traceId || "0".repeat(32)).toLowerCase(), kind: () => "string" }),
  "span_id.string": () => ({ get: (v) => (v.log.spanId || "0".repeat(16)).toLowerCase(), kind: () => "string" }),
  "instrumentation_scope.name": () => ({ get: (v) => v.scope?.name ?? "", kind: () => "string" }),
  "instrumentation_scope.version": () => ({ get: (v) => v.scope?.version ?? "", kind: () => "string" }),
  // An absent body is pdata's empty value: nil to read, an error to index.
  body: (keys) => anyOperand(keys.length === 0 ? (v) => v.log.body : walk((v) => v.log.body ?? EMPTY, keys)),
  attributes: (keys) => anyOperand(walk((v) => lookup(v.log.attributes, keys[0] as string), keys.slice(1))),
  "resource.attributes": (keys) => anyOperand(walk((v) => lookup(v.resource?.attributes, keys[0] as string), keys.slice(1))),
  "instrumentation_scope.attributes": (keys) => anyOperand(walk((v) => lookup(v.scope?.attributes, keys[0] as string), keys.slice(1))),
};

function anyOperand(any: (v: LogView) => AnyValue | undefined): Operand {
  return { any, get: (v) => fromAny(any(v)), kind: (v) => kindOf(any(v)) };
}

/** Follows `[key]` steps from a base value; a missing map key is nil and ends the walk. */
function walk(base: (v: LogView) => AnyValue | undefined, keys: Keys): (v: LogView) => AnyValue | undefined {
  if (keys.length === 0) return base;
  return (v) => {
    let value = base(v);
    for (let i = 0; i < keys.length && value !== undefined; i++) value = index(value, keys[i]!);
    return value;
  };
}

/** An OTLP fixed64 (a decimal string in JSON) as the int64 OTTL reads; 0 when unset. */
function int64(value: string | number | undefined): number | bigint {
  const n = BigInt(value ?? 0);
  return Number.isSafeInteger(Number(n)) ? Number(n) : n;
}

function severityNumber(value: number | string | undefined): number {
  if (typeof value === "number") return value;
  return value === undefined ? 0 : (SEVERITY_NUMBERS.get(value) ?? 0);
}
