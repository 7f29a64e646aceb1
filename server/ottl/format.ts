/**
 * Prints a condition back as OTTL text that parses to the same tree, with
 * parentheses only where the tree needs them. Strings are printed so that
 * the collector's lexer reads them the same way (see lexer.ts).
 */
import type { Condition, Key, Value } from "./ast.ts";

export function formatCondition(condition: Condition): string {
  switch (condition.kind) {
    case "or":
      return condition.operands.map((c) => (c.kind === "or" ? `(${formatCondition(c)})` : formatCondition(c))).join(" or ");
    case "and":
      return condition.operands.map((c) => (c.kind === "or" || c.kind === "and" ? `(${formatCondition(c)})` : formatCondition(c))).join(" and ");
    case "not": {
      const operand = condition.operand;
      const wrap = operand.kind === "or" || operand.kind === "and" || operand.kind === "not";
      return `not ${wrap ? `(${formatCondition(operand)})` : formatCondition(operand)}`;
    }
    case "compare":
      return `${formatValue(condition.left)} ${condition.op} ${formatValue(condition.right)}`;
    case "bool":
      return String(condition.value);
    case "call":
      return formatValue(condition.call);
  }
}

export function formatValue(value: Value): string {
  switch (value.kind) {
    case "path":
      return value.fields.join(".") + value.keys.map((k) => `[${formatKey(k)}]`).join("");
    case "enum":
      return value.name;
    case "call":
      return `${value.name}(${value.args.map(formatValue).join(", ")})`;
    case "literal": {
      const v = value.value;
      if (v === null) return "nil";
      if (typeof v === "string") return formatString(v);
      if (typeof v === "number") return formatFloat(v);
      return String(v);
    }
  }
}

function formatKey(key: Key): string {
  return typeof key === "string" ? formatString(key) : String(key);
}

/** OTTL floats need digits on both sides of the point, and the exponent after them. */
export function formatFloat(n: number): string {
  if (Object.is(n, -0)) return "-0.0";
  const text = String(n);
  if (text.includes(".")) return text;
  const e = text.indexOf("e");
  return e < 0 ? `${text}.0` : `${text.slice(0, e)}.0${text.slice(e)}`;
}

const ESCAPES: Record<string, string> = { '"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t" };

/**
 * Control characters as escapes, and a final backslash as \x5c: the
 * collector's lexer would read `\\"` at the end as an escaped quote.
 */
export function formatString(s: string): string {
  const body = s.replace(/["\\\n\r\t]|[\u0000-\u001f\u007f]/g, (c) => ESCAPES[c] ?? `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
  return `"${s.endsWith("\\") ? `${body.slice(0, -2)}\\x5c` : body}"`;
}
