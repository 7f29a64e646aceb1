/**
 * Which fields of a log record a condition reads: every path it names, in
 * comparisons and converter arguments alike. The runtime-parity rule
 * (server/render/parity.ts) compares these against the fields whose value
 * differs between the two runtimes for a source.
 */
import type { Condition, Value } from "./ast.ts";
import { parseCondition } from "./parser.ts";

/** `attributes["k"]["x"]` reads `{field: "attributes", key: "k"}`; `attributes` alone reads the whole map. */
export interface FieldRead {
  /** The path's fields joined by dots: body, attributes, severity_number, resource.attributes, … */
  field: string;
  /** The first map key, when the path starts with a string key. */
  key?: string;
  /** The path as written, for messages. */
  text: string;
}

/** The fields one log condition reads, each once, in order of appearance. */
export function logFieldsRead(condition: string): FieldRead[] {
  const reads = new Map<string, FieldRead>();
  const visitValue = (value: Value): void => {
    if (value.kind === "call") value.args.forEach(visitValue);
    if (value.kind !== "path") return;
    const field = value.fields.join(".");
    const first = value.keys[0];
    const key = typeof first === "string" ? first : undefined;
    const text = field + value.keys.map((k) => (typeof k === "string" ? `[${JSON.stringify(k)}]` : `[${k}]`)).join("");
    reads.set(text, key === undefined ? { field, text } : { field, key, text });
  };
  const visit = (c: Condition): void => {
    switch (c.kind) {
      case "or":
      case "and":
        c.operands.forEach(visit);
        break;
      case "not":
        visit(c.operand);
        break;
      case "compare":
        visitValue(c.left);
        visitValue(c.right);
        break;
      case "call":
        visitValue(c.call);
        break;
      case "bool":
        break;
    }
  };
  visit(parseCondition(condition, "log"));
  return [...reads.values()];
}
