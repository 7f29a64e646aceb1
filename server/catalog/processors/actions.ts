/**
 * Attribute actions shared by the attributes and resource processors
 * (`{key, action, value?}`), and their OTTL equivalents for Runtime R, which
 * has no resource processor and uses `otelcol.processor.transform` instead.
 */
import { Type, type Static } from "@sinclair/typebox";
import type { ErrorDetail } from "../../errors.ts";
import { formatFloat } from "../../ottl/format.ts";
import { Closed, NoReferences, StringEnum } from "../schemas.ts";

const ACTIONS = ["insert", "update", "upsert", "delete", "hash"] as const;
const WITH_VALUE = new Set<string>(["insert", "update", "upsert"]);

export const AttributeAction = Closed({
  key: Type.String({ minLength: 1, description: "The attribute key." }),
  action: NoReferences(
    StringEnum(ACTIONS, {
      description: "insert: only if absent; update: only if present; upsert: always set; delete; hash: replace with its SHA-256.",
    }),
    "svc reads the action to build the configuration",
  ),
  value: Type.Optional(
    Type.Union([Type.String(), Type.Number(), Type.Boolean()], {
      errorMessage: "must be a string, number or boolean",
      description: "The value for insert, update and upsert.",
    }),
  ),
});

export type AttributeActionConfig = Static<typeof AttributeAction>;

export function AttributeActions(description: string) {
  return Type.Array(AttributeAction, { minItems: 1, description });
}

/** insert, update and upsert need a value; delete and hash take none; numbers must be writable exactly. */
export function checkActions(actions: readonly AttributeActionConfig[], root: string): ErrorDetail[] {
  return actions.flatMap((a, i) => {
    const needsValue = WITH_VALUE.has(a.action);
    if (needsValue && a.value === undefined) return [{ path: `${root}[${i}].value`, message: `'${a.action}' needs a value` }];
    if (!needsValue && a.value !== undefined) return [{ path: `${root}[${i}].value`, message: `'${a.action}' takes no value` }];
    const number = typeof a.value === "number" ? numberProblem(a.value) : undefined;
    return number ? [{ path: `${root}[${i}].value`, message: number }] : [];
  });
}

/**
 * A number every consumer reads as the same value: the collector's YAML
 * (int64 or float64), Alloy's number literals and OTTL's Int (`[-+]?\d+`,
 * int64) and Float (`[-+]?\d*\.\d+([eE][-+]?\d+)?`) tokens
 * (pkg/ottl/grammar.go). Beyond ±(2^53−1) a JSON number has already lost
 * digits and `String()` writes `1e+21`, which OTTL does not lex.
 */
function numberProblem(value: number): string | undefined {
  if (!Number.isFinite(value)) return "must be a finite number";
  if (Math.abs(value) > Number.MAX_SAFE_INTEGER) {
    return `must be between -${Number.MAX_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER}; write larger values as a string`;
  }
  return undefined;
}

/** The actions with only the keys each one uses, for both runtimes' configs. */
export function actionEntries(actions: readonly AttributeActionConfig[]): Record<string, string | number | boolean>[] {
  return actions.map((a) => {
    const entry: Record<string, string | number | boolean> = { key: a.key, action: a.action };
    if (a.value !== undefined) entry.value = a.value;
    return entry;
  });
}

/** One OTTL statement per action, over `attributes` of the context it runs in. */
export function ottlStatements(actions: readonly AttributeActionConfig[]): string[] {
  // biome-ignore lint/suspicious/useIterableCallbackReturn: the switch covers every action (tsc checks each one returns a string)
  return actions.map((a) => {
    const target = `attributes[${ottlLiteral(a.key)}]`;
    switch (a.action) {
      case "insert":
        return `set(${target}, ${ottlLiteral(a.value!)}) where ${target} == nil`;
      case "update":
        return `set(${target}, ${ottlLiteral(a.value!)}) where ${target} != nil`;
      case "upsert":
        return `set(${target}, ${ottlLiteral(a.value!)})`;
      case "delete":
        return `delete_key(attributes, ${ottlLiteral(a.key)})`;
      case "hash":
        return `set(${target}, SHA256(${target})) where ${target} != nil`;
    }
  });
}

/**
 * OTTL unquotes strings like Go, so JSON string escapes are valid in it.
 * Whole numbers are Int tokens; others are Float tokens, which need digits
 * on both sides of the point (checkActions keeps numbers in range).
 */
export function ottlLiteral(value: string | number | boolean): string {
  if (typeof value === "string") return JSON.stringify(value.toWellFormed());
  if (typeof value === "number") return Number.isInteger(value) ? String(value) : formatFloat(value);
  return String(value);
}
