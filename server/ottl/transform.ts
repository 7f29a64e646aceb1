/**
 * The transform processor on logs, as far as the dry-run runs it: `log_statements`
 * groups in the `log` context whose statements call `set`, `delete_key`, `keep_keys`,
 * `delete_matching_keys` or `keep_matching_keys`, writing `attributes["k"]`,
 * `resource.attributes["k"]`, `body`, `severity_text` or `severity_number` (maps:
 * `attributes`, `resource.attributes`). As in the collector, each group runs over every
 * record in order, each statement whose `where` holds changes the record before the
 * next one reads it, a nil value leaves the target alone (`set`), a severity of the
 * wrong type is not written, and a record a statement cannot be evaluated on skips
 * that statement under error_mode ignore and silent; under propagate the batch fails.
 *
 * Anything else (another context, editor or target) is not simulated: compileTransform
 * then says which statement and why, and the dry-run passes records on unchanged with
 * that note rather than show a partly transformed output. Inputs are never modified:
 * a changed record, attribute list or resource is a copy.
 */
import type { Statement, StringList, Value } from "./ast.ts";
import { compileConditionTree, compileValue, type LogPredicate, type LogView } from "./compile.ts";
import { PATHS } from "./contexts.ts";
import { OttlEvalError } from "./errors.ts";
import type { AnyValue, KeyValue, LogRecord, Resource, ResourceLogs } from "./otlp.ts";
import { parseStatement } from "./parser.ts";
import type { TransformConfig } from "./processors.ts";
import { compileRe2 } from "./regex.ts";

export const SIMULATED_EDITORS = ["set", "delete_key", "keep_keys", "delete_matching_keys", "keep_matching_keys"] as const;

/** One record being transformed: the current record and resource, copied on first write. */
interface Working {
  view: LogView;
  logCopied: boolean;
  /** Shared by every record of one ResourceLogs: a resource write is seen by the records after it. */
  shared: { resource: Resource | undefined; copied: boolean };
}

type Step = (w: Working) => void;

export type TransformRun = (batch: ResourceLogs[]) => ResourceLogs[];

/** The run, or why the dry-run cannot run this transform (the first statement it cannot). */
export function compileTransform(config: TransformConfig): { run: TransformRun } | { notSimulated: string } {
  const groups: Step[][] = [];
  for (const [g, group] of (config.log_statements ?? []).entries()) {
    const where = `log_statements[${g}]`;
    if (group.context !== "log") return { notSimulated: `${where} runs in the ${group.context} context; the dry-run runs statements in the log context only` };
    const steps: Step[] = [];
    for (const [i, text] of group.statements.entries()) {
      const step = compileStatement(parseStatement(text, "log"), config.error_mode ?? "ignore");
      if (typeof step === "string") return { notSimulated: `${where}.statements[${i}] ${step}` };
      steps.push(step);
    }
    groups.push(steps);
  }
  return { run: (batch) => groups.reduce(runGroup, batch) };
}

function runGroup(batch: ResourceLogs[], steps: Step[]): ResourceLogs[] {
  return batch.map((rl) => {
    const shared = { resource: rl.resource, copied: false };
    let changed = false;
    const scopeLogs = rl.scopeLogs?.map((sl) => {
      const records = sl.logRecords?.map((record) => {
        const w: Working = { view: { log: record, scope: sl.scope, resource: shared.resource }, logCopied: false, shared };
        for (const step of steps) step(w);
        return w.view.log;
      });
      if (records === undefined || records.every((r, i) => r === sl.logRecords![i])) return sl;
      changed = true;
      return { ...sl, logRecords: records };
    });
    if (!changed && !shared.copied) return rl;
    return { ...rl, resource: shared.resource, scopeLogs };
  });
}

/** A statement as a step, or the reason it is not simulated. */
function compileStatement(statement: Statement, errorMode: "ignore" | "propagate" | "silent"): Step | string {
  if (!(SIMULATED_EDITORS as readonly string[]).includes(statement.editor)) {
    return `calls ${statement.editor}; the dry-run runs ${SIMULATED_EDITORS.join(", ")}`;
  }
  const effect = compileEffect(statement);
  if (typeof effect === "string") return effect;
  const when: LogPredicate | undefined = statement.where && compileConditionTree(statement.where);
  return (w) => {
    try {
      if (when && !when(w.view)) return;
      effect(w);
    } catch (error) {
      if (!(error instanceof OttlEvalError) || errorMode === "propagate") throw error;
    }
  };
}

function compileEffect(statement: Statement): Step | string {
  const [target, ...rest] = statement.args as [Value, ...(Value | StringList)[]];
  if (target.kind !== "path") return "has a target the dry-run cannot write";
  const field = target.fields.join(".");
  const key = target.keys[0];
  if (statement.editor === "set") {
    // The condition compiler reads map entries, not whole maps (`set(attributes["copy"], attributes)`).
    if (readsWholeMap(rest[0] as Value)) return "reads a whole map; the dry-run reads map entries only";
    const value = compileValue(rest[0] as Value);
    const write = scalarWriter(field, target.keys.length, key);
    if (!write)
      return `sets ${field}${target.keys.length > 0 ? "[…]" : ""}; the dry-run sets attributes["k"], resource.attributes["k"], body, severity_text and severity_number`;
    return (w) => {
      const v = value(w.view);
      if (v !== undefined) write(w, v);
    };
  }
  if (target.keys.length > 0 || (field !== "attributes" && field !== "resource.attributes")) {
    return `changes ${field}; the dry-run changes the maps attributes and resource.attributes`;
  }
  const keep = keyFilter(statement.editor, rest[0]!);
  return (w) => updateMap(w, field, keep);
}

function readsWholeMap(value: Value): boolean {
  if (value.kind === "call") return value.args.some(readsWholeMap);
  return value.kind === "path" && value.keys.length === 0 && PATHS.log[value.fields.join(".")] === "map";
}

/** The key test of a map editor: true for the entries it keeps. */
function keyFilter(editor: string, arg: Value | StringList): (key: string) => boolean {
  if (arg.kind === "list") {
    const keys = new Set(arg.items);
    return (key) => keys.has(key);
  }
  const text = (arg as { value: string }).value;
  if (editor === "delete_key") return (key) => key !== text;
  const re = compileRe2(text);
  return editor === "keep_matching_keys" ? (key) => re.test(key) : (key) => !re.test(key);
}

function scalarWriter(field: string, keys: number, key: unknown): ((w: Working, v: AnyValue) => void) | undefined {
  if ((field === "attributes" || field === "resource.attributes") && keys === 1 && typeof key === "string") {
    return (w, v) => updateMap(w, field, () => true, { key, value: v });
  }
  if (keys > 0) return undefined;
  switch (field) {
    case "body":
      return (w, v) => (ownLog(w).body = v);
    case "severity_text":
      return (w, v) => {
        if (v.stringValue !== undefined) ownLog(w).severityText = v.stringValue;
      };
    case "severity_number":
      return (w, v) => {
        if (v.intValue !== undefined) ownLog(w).severityNumber = Number(v.intValue);
      };
    default:
      return undefined;
  }
}

/** Keeps the entries `keep` accepts, then sets `put` (replacing its key in place, or appended). */
function updateMap(w: Working, field: string, keep: (key: string) => boolean, put?: KeyValue): void {
  const before = field === "attributes" ? w.view.log.attributes : w.view.resource?.attributes;
  let after = (before ?? []).filter((kv) => keep(kv.key));
  if (put) {
    const i = after.findIndex((kv) => kv.key === put.key);
    after = i >= 0 ? after.map((kv, j) => (j === i ? put : kv)) : [...after, put];
  }
  if (!put && after.length === (before?.length ?? 0)) return;
  if (field === "attributes") {
    ownLog(w).attributes = after;
  } else {
    w.shared.resource = { ...w.shared.resource, attributes: after };
    w.shared.copied = true;
    w.view.resource = w.shared.resource;
  }
}

function ownLog(w: Working): LogRecord {
  if (!w.logCopied) {
    w.view.log = { ...w.view.log };
    w.logCopied = true;
  }
  return w.view.log;
}
