/**
 * The processor configs the dry-run runs, in the upstream collector's shapes
 * (the catalog renders the same ones): filter, batch, attributes, resource,
 * transform. Validation names the key path of the first problem, and parses every
 * filter condition and transform statement in its own OTTL context.
 */
import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { TypeCompiler, type TypeCheck } from "@sinclair/typebox/compiler";
import type { ProcessorSpec } from "../../shared/config-records.ts";
import { ValidationError, type ErrorDetail } from "../errors.ts";
import type { OttlContext, StatementContext } from "./contexts.ts";
import { OttlError } from "./errors.ts";
import { checkStatement, parseCondition } from "./parser.ts";

const closed = { additionalProperties: false } as const;

function literals<const T extends readonly string[]>(values: T) {
  const choices = values.map((v) => Type.Literal(v as T[number]));
  return Type.Union(choices, { errorMessage: `must be one of ${values.map((v) => `'${v}'`).join(", ")}` });
}

/**
 * Bounds on what one processor or chain may ask the server to evaluate. A
 * dry-run runs in a worker with a deadline anyway; these keep a single
 * request's work, and its validation, small and the error early and named.
 */
export const MAX_FILTER_CONDITIONS = 100;
export const MAX_CONDITION_LENGTH = 4096;
export const MAX_CHAIN_PROCESSORS = 50;
/**
 * Conditions in one chain, all filters together, by count and by text:
 * checking a condition costs ~20 µs (a regex translated and compiled) and up
 * to ~0.6 ms per KiB of nested regex groups, so a whole chain is checked,
 * saved and previewed in a few tens of milliseconds of the event loop.
 */
export const MAX_CHAIN_CONDITIONS = 200;
export const MAX_CHAIN_CONDITION_TEXT = 16 * 1024;

/** One filter condition list; the catalog's filter schema uses the same bounds. */
export const conditionListBounds = {
  maxItems: MAX_FILTER_CONDITIONS,
  errorMessage: `must be a list of at most ${MAX_FILTER_CONDITIONS} conditions, each 1 to ${MAX_CONDITION_LENGTH} characters`,
} as const;
export const conditionBounds = { minLength: 1, maxLength: MAX_CONDITION_LENGTH } as const;

const Conditions = Type.Optional(Type.Array(Type.String(conditionBounds), conditionListBounds));

export const FilterConfig = Type.Object(
  {
    error_mode: Type.Optional(literals(["ignore", "propagate", "silent"])),
    logs: Type.Optional(Type.Object({ log_record: Conditions }, closed)),
    metrics: Type.Optional(Type.Object({ metric: Conditions, datapoint: Conditions }, closed)),
    traces: Type.Optional(Type.Object({ span: Conditions, spanevent: Conditions }, closed)),
  },
  closed,
);

export const BatchConfig = Type.Object(
  {
    send_batch_size: Type.Optional(Type.Integer({ minimum: 1 })),
    timeout: Type.Optional(Type.String({ pattern: "^([0-9]+(ms|s|m|h))+$", errorMessage: "must be a duration such as 500ms, 10s or 1m30s" })),
  },
  closed,
);

const ACTIONS = ["insert", "update", "upsert", "delete", "hash"] as const;

export const AttributeAction = Type.Object(
  {
    key: Type.String({ minLength: 1 }),
    action: literals(ACTIONS),
    value: Type.Optional(Type.Union([Type.String(), Type.Number(), Type.Boolean()], { errorMessage: "must be a string, number or boolean" })),
  },
  closed,
);

export const AttributesConfig = Type.Object({ actions: Type.Array(AttributeAction, { minItems: 1 }) }, closed);
export const ResourceConfig = Type.Object({ attributes: Type.Array(AttributeAction, { minItems: 1 }) }, closed);

/**
 * The transform processor's statement groups, one list per signal, each group in the
 * structured form every collector version and Alloy take: an explicit context and its
 * statements (common.ContextStatements). A group holds at most MAX_FILTER_CONDITIONS
 * statements of MAX_CONDITION_LENGTH characters, a list at most MAX_STATEMENT_GROUPS groups.
 */
export const MAX_STATEMENT_GROUPS = 20;

/** The groups of each signal's list and the contexts they may name (resource and scope hold every signal). */
export const STATEMENT_LISTS = [
  ["log_statements", ["resource", "scope", "log"]],
  ["metric_statements", ["resource", "scope", "metric", "datapoint"]],
  ["trace_statements", ["resource", "scope", "span", "spanevent"]],
] as const satisfies readonly (readonly [string, readonly StatementContext[]])[];

export type StatementList = (typeof STATEMENT_LISTS)[number][0];

const statementBounds = {
  maxItems: MAX_FILTER_CONDITIONS,
  minItems: 1,
  errorMessage: `must be a list of 1 to ${MAX_FILTER_CONDITIONS} statements, each 1 to ${MAX_CONDITION_LENGTH} characters`,
} as const;

/** One list of statement groups whose contexts are `contexts`; the catalog's transform schema uses it too. */
export function statementGroups(contexts: readonly StatementContext[], description?: string) {
  return Type.Array(
    Type.Object(
      {
        context: literals(contexts),
        statements: Type.Array(Type.String(conditionBounds), {
          ...statementBounds,
          description: "OTTL statements, `editor(arguments) where condition`, run in order.",
        }),
      },
      closed,
    ),
    { maxItems: MAX_STATEMENT_GROUPS, errorMessage: `must be a list of at most ${MAX_STATEMENT_GROUPS} groups of {context, statements}`, description },
  );
}

export const TransformConfig = Type.Object(
  {
    error_mode: Type.Optional(literals(["ignore", "propagate", "silent"])),
    ...Object.fromEntries(STATEMENT_LISTS.map(([list, contexts]) => [list, Type.Optional(statementGroups(contexts))])),
  },
  closed,
);

export interface TransformConfig {
  error_mode?: "ignore" | "propagate" | "silent";
  log_statements?: { context: StatementContext; statements: string[] }[];
  metric_statements?: { context: StatementContext; statements: string[] }[];
  trace_statements?: { context: StatementContext; statements: string[] }[];
}

/**
 * Every statement that does not parse in its group's context, named by its path from
 * `root` (`config.log_statements[0].statements[2]`), and a transform without any
 * statement. The catalog reports them all; the dry-run throws the first.
 */
export function statementProblems(config: TransformConfig, root: string): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  let total = 0;
  for (const [list] of STATEMENT_LISTS) {
    (config[list] ?? []).forEach((group, g) => {
      total += group.statements.length;
      group.statements.forEach((statement, i) => {
        const message = checkStatement(statement, group.context);
        if (message) problems.push({ path: `${root}.${list}[${g}].statements[${i}]`, message });
      });
    });
  }
  if (total === 0) problems.unshift({ path: root, message: "a transform needs at least one statement" });
  return problems;
}

export type FilterConfig = Static<typeof FilterConfig>;
export type BatchConfig = Static<typeof BatchConfig>;
export type AttributeAction = Static<typeof AttributeAction>;
export type AttributesConfig = Static<typeof AttributesConfig>;
export type ResourceConfig = Static<typeof ResourceConfig>;

/** A processor whose config has been checked, typed by its `type`. */
export type ValidProcessor =
  | { type: "filter"; config: FilterConfig }
  | { type: "batch"; config: BatchConfig }
  | { type: "attributes"; config: AttributesConfig }
  | { type: "resource"; config: ResourceConfig }
  | { type: "transform"; config: TransformConfig };

export const PROCESSOR_TYPES = ["filter", "batch", "attributes", "resource", "transform"] as const;

const SCHEMAS = { filter: FilterConfig, batch: BatchConfig, attributes: AttributesConfig, resource: ResourceConfig, transform: TransformConfig };
const CHECKS = Object.fromEntries(Object.entries(SCHEMAS).map(([type, schema]) => [type, TypeCompiler.Compile(schema)])) as {
  [K in keyof typeof SCHEMAS]: TypeCheck<(typeof SCHEMAS)[K]>;
};

/** Where each filter condition list sits, and the OTTL context it is parsed in. */
const FILTER_LISTS = [
  ["logs", "log_record", "log"],
  ["metrics", "metric", "metric"],
  ["metrics", "datapoint", "datapoint"],
  ["traces", "span", "span"],
  ["traces", "spanevent", "spanevent"],
] as const satisfies readonly (readonly [string, string, OttlContext])[];

/**
 * Checks a processor spec; `root` names it in problems, e.g. `processors[2]`
 * gives `processors[2].config.actions[0].value`. Throws ValidationError (an
 * OttlError for a bad condition).
 */
export function validateProcessor(spec: ProcessorSpec, root = "processor"): ValidProcessor {
  const type = spec.type;
  if (!isProcessorType(type)) {
    const path = `${root}.type`;
    const message = `unknown processor type '${type}'; the dry-run runs ${PROCESSOR_TYPES.join(", ")}`;
    throw new ValidationError(`${path}: ${message}.`, [{ path, message }]);
  }
  const what = `${type} processor config`;
  const at = `${root}.config`;
  switch (type) {
    case "filter": {
      const config = check(CHECKS.filter, spec.config, what, at);
      checkConditions(config, at);
      return { type, config };
    }
    case "batch":
      return { type, config: check(CHECKS.batch, spec.config, what, at) };
    case "attributes": {
      const config = check(CHECKS.attributes, spec.config, what, at);
      checkValues(config.actions, `${at}.actions`, what);
      return { type, config };
    }
    case "resource": {
      const config = check(CHECKS.resource, spec.config, what, at);
      checkValues(config.attributes, `${at}.attributes`, what);
      return { type, config };
    }
    case "transform": {
      const config = check(CHECKS.transform, spec.config, what, at) as TransformConfig;
      const problem = statementProblems(config, at)[0];
      if (problem) throw new ValidationError(`The ${what} is not valid: ${problem.path}: ${problem.message}.`, [problem]);
      return { type, config };
    }
  }
}

function isProcessorType(type: string): type is (typeof PROCESSOR_TYPES)[number] {
  return (PROCESSOR_TYPES as readonly string[]).includes(type);
}

function check<T extends TSchema>(compiled: TypeCheck<T>, value: unknown, what: string, root: string): Static<T> {
  if (compiled.Check(value)) return value;
  const error = compiled.Errors(value).First()!;
  const path =
    root +
    error.path
      .split("/")
      .slice(1)
      .map((p) => (/^\d+$/.test(p) ? `[${p}]` : `.${p.replaceAll("~1", "/").replaceAll("~0", "~")}`))
      .join("");
  const custom = error.schema.errorMessage;
  const message = typeof custom === "string" ? custom : error.message.charAt(0).toLowerCase() + error.message.slice(1);
  throw fail(what, path, message);
}

function fail(what: string, path: string, message: string): ValidationError {
  return new ValidationError(`The ${what} is not valid: ${path}: ${message}.`, [{ path, message }]);
}

/** The filter conditions or transform statements a processor holds and their length, read from a config not yet checked (zero for other types or shapes). */
function conditionSize(type: string, config: unknown): { count: number; text: number } {
  const size = { count: 0, text: 0 };
  if (typeof config !== "object" || config === null) return size;
  const count = (items: unknown) => {
    if (!Array.isArray(items)) return;
    size.count += items.length;
    for (const item of items) if (typeof item === "string") size.text += item.length;
  };
  if (type === "transform") {
    for (const [list] of STATEMENT_LISTS) {
      const groups = (config as Record<string, unknown>)[list];
      if (Array.isArray(groups))
        for (const group of groups) if (typeof group === "object" && group !== null) count((group as Record<string, unknown>).statements);
    }
    return size;
  }
  if (type !== "filter") return size;
  for (const [group, list] of FILTER_LISTS) {
    const lists = (config as Record<string, unknown>)[group];
    const items = typeof lists === "object" && lists !== null ? (lists as Record<string, unknown>)[list] : undefined;
    count(items);
  }
  return size;
}

/**
 * Refuses a chain holding more conditions than MAX_CHAIN_CONDITIONS, or more
 * condition text than MAX_CHAIN_CONDITION_TEXT, before any is parsed; `path`
 * names the list, e.g. `processors` or `topology.nodes`.
 */
export function checkChainSize(processors: readonly { type: string; config: unknown }[], path: string): void {
  let count = 0;
  let text = 0;
  for (const p of processors) {
    const size = conditionSize(p.type, p.config);
    count += size.count;
    text += size.text;
  }
  const message =
    count > MAX_CHAIN_CONDITIONS
      ? `holds ${count} filter conditions and transform statements in all; a chain may have at most ${MAX_CHAIN_CONDITIONS}`
      : text > MAX_CHAIN_CONDITION_TEXT
        ? `holds ${text} characters of filter conditions and transform statements in all; a chain may have at most ${MAX_CHAIN_CONDITION_TEXT}`
        : null;
  if (message !== null) throw new ValidationError(`${path}: ${message}.`, [{ path, message }]);
}

/** As the catalog and the collector require: a filter has a condition, each one parses in its context. */
function checkConditions(config: FilterConfig, root: string): void {
  let total = 0;
  for (const [group, list, context] of FILTER_LISTS) {
    const conditions = (config[group] as Record<string, string[] | undefined> | undefined)?.[list] ?? [];
    total += conditions.length;
    conditions.forEach((condition, i) => {
      try {
        parseCondition(condition, context);
      } catch (error) {
        throw error instanceof OttlError ? error.at(`${root}.${group}.${list}[${i}]`) : error;
      }
    });
  }
  if (total === 0) throw fail("filter processor config", root, "a filter needs at least one condition");
}

/** insert, update and upsert set a value; delete and hash take none (the collector refuses one). */
function checkValues(actions: AttributeAction[], root: string, what: string): void {
  actions.forEach((a, i) => {
    const needsValue = a.action === "insert" || a.action === "update" || a.action === "upsert";
    if (needsValue && a.value === undefined) throw fail(what, `${root}[${i}].value`, `'${a.action}' needs a value`);
    if (!needsValue && a.value !== undefined) throw fail(what, `${root}[${i}].value`, `'${a.action}' takes no value`);
  });
}
