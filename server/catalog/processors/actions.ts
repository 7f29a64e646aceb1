/**
 * Attribute actions shared by the attributes and resource processors
 * (`{key, action, value?}`), and their OTTL equivalents for Runtime R, which
 * has no resource processor and uses `otelcol.processor.transform` instead.
 */
import { Type, type Static } from "@sinclair/typebox";
import type { ErrorDetail } from "../../errors.ts";
import { Closed, StringEnum } from "../schemas.ts";

const ACTIONS = ["insert", "update", "upsert", "delete", "hash"] as const;
const WITH_VALUE = new Set<string>(["insert", "update", "upsert"]);

export const AttributeAction = Closed({
  key: Type.String({ minLength: 1, description: "The attribute key." }),
  action: StringEnum(ACTIONS, {
    description: "insert: only if absent; update: only if present; upsert: always set; delete; hash: replace with its SHA-256.",
  }),
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

/** insert, update and upsert need a value; delete and hash take none. */
export function checkActions(actions: readonly AttributeActionConfig[], root: string): ErrorDetail[] {
  return actions.flatMap((a, i) => {
    const needsValue = WITH_VALUE.has(a.action);
    if (needsValue && a.value === undefined) return [{ path: `${root}[${i}].value`, message: `'${a.action}' needs a value` }];
    if (!needsValue && a.value !== undefined) return [{ path: `${root}[${i}].value`, message: `'${a.action}' takes no value` }];
    return [];
  });
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

/** OTTL unquotes strings like Go, so JSON string escapes are valid in it. */
function ottlLiteral(value: string | number | boolean): string {
  return typeof value === "string" ? JSON.stringify(value.toWellFormed()) : String(value);
}
