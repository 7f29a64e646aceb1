/**
 * Which fields of a log record a condition reads: every path it names, in
 * comparisons and converter arguments alike. The runtime-parity rule
 * (server/render/parity.ts) compares these against the fields whose value
 * differs between the two runtimes for a source.
 */
import type { Condition, StringList, Value } from "./ast.ts";
import type { StatementContext } from "./contexts.ts";
import { parseCondition, parseStatement } from "./parser.ts";

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
  return fieldsIn(parseCondition(condition, "log"), [], (fields) => fields);
}

/** A resource or scope statement's paths as the log context names the same fields. */
const AS_LOG_PATH: Partial<Record<StatementContext, (fields: string[]) => string[]>> = {
  resource: (fields) => (fields[0] === "attributes" ? ["resource", ...fields] : fields),
  scope: (fields) => (fields[0] === "resource" ? fields : ["instrumentation_scope", ...fields]),
};

/**
 * The log-record fields one transform statement of a log_statements group reads or
 * writes (its target too: what an editor changes depends on what is there), each once,
 * named as in the log context: `attributes` in the resource context is
 * `resource.attributes`, `name` in the scope context `instrumentation_scope.name`.
 */
export function statementFieldsRead(statement: string, context: StatementContext): FieldRead[] {
  const parsed = parseStatement(statement, context);
  return fieldsIn(parsed.where, parsed.args, AS_LOG_PATH[context] ?? ((fields) => fields));
}

function fieldsIn(condition: Condition | undefined, args: readonly (Value | StringList)[], rename: (fields: string[]) => string[]): FieldRead[] {
  const reads = new Map<string, FieldRead>();
  const visitValue = (value: Value | StringList): void => {
    if (value.kind === "call") value.args.forEach(visitValue);
    if (value.kind !== "path") return;
    const field = rename(value.fields).join(".");
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
  args.forEach(visitValue);
  if (condition) visit(condition);
  return [...reads.values()];
}
