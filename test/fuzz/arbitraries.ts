/**
 * fast-check arbitraries for bad-input fuzzing: values shaped by a JSON
 * schema (as the OpenAPI document publishes it), then mutated the ways a
 * careless or hostile client would: wrong types, missing or extra keys,
 * huge or odd strings, deep nesting, out-of-range numbers.
 */
import fc from "fast-check";

/** The subset of JSON Schema our TypeBox request schemas use. */
export interface JsonSchema {
  type?: string;
  const?: unknown;
  anyOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
  patternProperties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  maxItems?: number;
  enum?: unknown[];
  $ref?: string;
}

/** Nested `{"a": {"a": ...}}` or `[[...]]`, `depth` levels, built without recursion. */
export function nested(depth: number, array = false): unknown {
  let value: unknown = "leaf";
  for (let i = 0; i < depth; i++) value = array ? [value] : { a: value };
  return value;
}

/**
 * A stand-in for nesting too deep to build and stringify here (the test's
 * own JSON.stringify would overflow); `toJsonText` expands it in the text.
 */
export function deep(depth: number, array = false): string {
  return `\u0001deep:${depth}:${array ? "a" : "o"}\u0001`;
}

/** JSON text of `value`, with every `deep(...)` stand-in expanded to its nesting. */
export function toJsonText(value: unknown): string {
  const text = JSON.stringify(value) ?? "null";
  return text.replace(/"\\u0001deep:(\d+):([ao])\\u0001"/g, (_, depth: string, kind: string) => {
    const n = Number(depth);
    return kind === "a" ? "[".repeat(n) + "]".repeat(n) : '{"a":'.repeat(n) + "1" + "}".repeat(n);
  });
}

/** Strings a parser or a database may choke on. */
export const oddString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.string({ unit: "binary", maxLength: 20 }),
  fc.constantFrom("\u0000", "a\u0000b", "\ud800", "\uffff", "../../etc/passwd", "${jndi:x}", "'; DROP TABLE x;--", " ", "", "\u202e", "%00", "😀".repeat(50)),
  fc.nat({ max: 3 }).map((k) => "x".repeat([1_000, 10_000, 100_000, 1_000_000][k]!)),
);

/** Any JSON value, including the odd ones. */
export const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 2, arbitrary: oddString },
  { weight: 1, arbitrary: fc.constantFrom(-1, 0, 1.5, -1e308, 1e308, Number.MAX_SAFE_INTEGER + 2, -0) },
  { weight: 1, arbitrary: fc.constantFrom(100, 1_000, 5_000).map((d) => nested(d)) },
  { weight: 1, arbitrary: fc.constantFrom(100, 1_000, 5_000).map((d) => nested(d, true)) },
  { weight: 1, arbitrary: fc.constantFrom(20_000, 200_000).map((d) => deep(d, d > 50_000)) },
  { weight: 1, arbitrary: fc.constantFrom(null, true, false, [], {}) },
);

/** Values that satisfy `schema` (as far as its shape goes; patterns are met for the common ones). */
export function fromSchema(schema: JsonSchema, depth = 0): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  if (schema.anyOf) return fc.oneof(...schema.anyOf.map((s) => fromSchema(s, depth)));
  switch (schema.type) {
    case "object": {
      const props = schema.properties ?? {};
      const required = new Set(schema.required ?? []);
      if (Object.keys(props).length === 0) {
        return depth > 3 ? fc.constant({}) : fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 });
      }
      const record: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [key, sub] of Object.entries(props)) record[key] = fromSchema(sub, depth + 1);
      return fc.record(record, { requiredKeys: [...required].filter((k) => k in props) });
    }
    case "array":
      return fc.array(schema.items ? fromSchema(schema.items, depth + 1) : fc.jsonValue({ maxDepth: 1 }), { maxLength: Math.min(schema.maxItems ?? 4, 4) });
    case "string": {
      const min = schema.minLength ?? 0;
      const max = Math.max(min, Math.min(schema.maxLength ?? 30, 30));
      // Built to length rather than filtered: a filter for a long minimum (a webhook secret's 16) rejects nearly every draw and never ends.
      const first = fc.constantFrom(..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789");
      const rest = fc.constantFrom(..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-");
      const length = Math.max(min, 1);
      return fc.tuple(first, fc.array(rest, { minLength: length - 1, maxLength: Math.max(length, max) - 1 })).map(([head, tail]) => head + tail.join(""));
    }
    case "integer":
      return fc.integer({ min: schema.minimum ?? -1000, max: schema.maximum ?? 100_000 });
    case "number":
      return fc.double({ min: schema.minimum ?? -1e6, max: schema.maximum ?? 1e6, noNaN: true });
    case "boolean":
      return fc.boolean();
    case "null":
      return fc.constant(null);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

type Mutation = (value: unknown, rnd: () => number) => unknown;

/** Every container (object or array) inside `value`, with the value itself first. */
function containers(value: unknown): (Record<string, unknown> | unknown[])[] {
  const out: (Record<string, unknown> | unknown[])[] = [];
  const stack = [value];
  while (stack.length > 0 && out.length < 200) {
    const v = stack.pop();
    if (v !== null && typeof v === "object") {
      out.push(v as Record<string, unknown>);
      stack.push(...Object.values(v));
    }
  }
  return out;
}

const pick = <T>(xs: readonly T[], rnd: () => number): T => xs[Math.floor(rnd() * xs.length)]!;

/**
 * One mutation applied to a copy of `value` at a random place: replace a
 * field with an odd value, drop a key, add an unknown key, or swap the whole
 * body for something else entirely.
 */
export function mutated(valid: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  return fc.tuple(valid, anyJson, fc.nat({ max: 4 }), fc.string({ maxLength: 12 }), fc.integer()).map(([base, odd, kind, extraKey, seed]) => {
    let state = seed >>> 0 || 1;
    const rnd = () => ((state = (state * 1103515245 + 12345) >>> 0) % 1_000_000) / 1_000_000;
    const value = structuredClone(base);
    const mutations: Mutation[] = [
      (v) => {
        const target = pick(containers(v), rnd);
        if (!target) return odd;
        const keys = Object.keys(target);
        if (keys.length === 0) return odd;
        (target as Record<string, unknown>)[pick(keys, rnd)] = odd;
        return v;
      },
      (v) => {
        const target = pick(containers(v), rnd);
        if (!target || Array.isArray(target)) return v;
        const keys = Object.keys(target);
        if (keys.length > 0) delete target[pick(keys, rnd)];
        return v;
      },
      (v) => {
        const target = pick(containers(v), rnd);
        if (!target || Array.isArray(target)) return v;
        // An own "__proto__" key, as JSON.parse would make it: prototype pollution bait.
        Object.defineProperty(target, extraKey === "" ? "__proto__" : extraKey, { value: odd, enumerable: true, writable: true, configurable: true });
        return v;
      },
      () => odd,
      (v) => {
        const target = pick(containers(v), rnd);
        if (!target) return v;
        const keys = Object.keys(target);
        if (keys.length > 0) (target as Record<string, unknown>)[pick(keys, rnd)] = deep(pick([500, 2_000, 20_000, 200_000], rnd), rnd() < 0.5);
        return v;
      },
    ];
    return mutations[kind]!(value, rnd);
  });
}

/** Valid-shaped values half of the time, mutated ones the other half. */
export function bodyFor(schema: JsonSchema): fc.Arbitrary<unknown> {
  const valid = fromSchema(schema);
  return fc.oneof(valid, mutated(valid));
}
