/**
 * Dry-run: OTLP JSON logs through a processor chain, in order, as the
 * collector would run it. The result is the Final Output (the surviving
 * records, in the input's shape) and, per processor, how many records went
 * in and came out. Records are shared with the input, never copied, unless
 * a processor changes them; a filter removes the scopes and resources it
 * empties, as the collector's does. A filter under error_mode propagate that
 * cannot evaluate a record fails the batch: that step reports the error and
 * nothing goes further.
 *
 * Patterns are RE2 in the collector (linear time) but JavaScript regexes
 * here, which backtrack: `(a+)+$` costs about a second per record, and one
 * record can meet any number of them. So the API never calls this on its
 * event loop: dryrun-isolated.ts runs it in a worker it terminates at the
 * deadline. The budget is also checked here before each record a filter
 * judges, which ends the common slow run early with the processor named.
 *
 * A transform runs when every statement is one transform.ts simulates (log context,
 * the common editors); otherwise its statements are still checked but not run: its
 * step passes the records on unchanged and says why in `notSimulated`, so the output
 * is never taken for what the collector would produce.
 */
import { AppError } from "../errors.ts";
import { updateRecordAttributes, updateResourceAttributes } from "./attributes.ts";
import { OttlEvalError } from "./errors.ts";
import { compileLogFilter, filterLogs } from "./filter.ts";
import { validateLogs, type LogsData, type ResourceLogs } from "./otlp.ts";
import { checkChainSize, validateProcessor } from "./processors.ts";
import { compileTransform } from "./transform.ts";

export interface ChainProcessor {
  nodeId: string;
  type: string;
  config: Record<string, unknown>;
}

export interface DryRunStep {
  nodeId: string;
  type: string;
  in: number;
  out: number;
  /** Set when the step failed the batch (filter, error_mode propagate). */
  error?: string;
  /** The input records this step dropped, by their place in the input (resources, scopes, records in order, from 0). */
  dropped: number[];
  /** Set when the dry-run does not run this step: why, and that the records passed it unchanged. */
  notSimulated?: string;
}

/** What a transform step the dry-run cannot run says: the output after it is not what the collector produces. */
export function transformNotSimulated(reason: string): string {
  return `the transform step was not simulated: ${reason}. Its statements were checked, but records passed it unchanged here; on the collector they are changed`;
}

export interface DryRunResult {
  output: LogsData;
  steps: DryRunStep[];
}

type Run = (batch: ResourceLogs[], records: number) => { batch: ResourceLogs[]; records: number };

/** How long one dry-run may take, all processors together. */
export const DRY_RUN_BUDGET_MS = 5_000;

export class DryRunTooSlowError extends AppError {
  constructor(budgetMs: number, nodeId: string) {
    super(
      422,
      "dry_run_too_slow",
      `The dry-run took longer than ${budgetMs / 1000} s and was stopped at processor '${nodeId}'; a pattern that backtracks (like (a+)+) is the usual cause. Try fewer records or a simpler pattern.`,
    );
  }
}

/**
 * Throws ValidationError naming `processors[i]...` or `input...` for a bad
 * chain or input. `onStep(i)` is called as processor i starts, so a caller
 * that has to stop the run from outside can say where it was.
 */
export function dryRun(input: unknown, processors: readonly ChainProcessor[], budgetMs = DRY_RUN_BUDGET_MS, onStep?: (index: number) => void): DryRunResult {
  const deadline = performance.now() + budgetMs;
  const overdue = (nodeId: string) => {
    if (performance.now() > deadline) throw new DryRunTooSlowError(budgetMs, nodeId);
  };
  checkChainSize(processors, "processors");
  const notes: (string | undefined)[] = [];
  const runs = processors.map((p, i) =>
    prepare(
      p,
      `processors[${i}]`,
      () => overdue(p.nodeId),
      (note) => (notes[i] = note),
    ),
  );
  const { logs, records: total } = validateLogs(input);
  let batch = logs.resourceLogs;
  let records = total;
  let failed = false;
  tagRecords(batch);
  let alive = places(batch);
  const steps: DryRunStep[] = processors.map(({ nodeId, type }, i) => {
    if (failed) return { nodeId, type, in: 0, out: 0, dropped: [] };
    const before = records;
    onStep?.(i);
    try {
      ({ batch, records } = runs[i]!(batch, records));
      const now = places(batch);
      const dropped = [...alive].filter((at) => !now.has(at));
      alive = now;
      const note = notes[i];
      return note === undefined ? { nodeId, type, in: before, out: records, dropped } : { nodeId, type, in: before, out: records, dropped, notSimulated: note };
    } catch (error) {
      if (!(error instanceof OttlEvalError)) throw error;
      failed = true;
      batch = [];
      records = 0;
      const what = type === "transform" ? "a statement" : "a condition";
      return {
        nodeId,
        type,
        in: before,
        out: 0,
        dropped: [...alive],
        error: `${what} failed on a record, so the batch is dropped (error_mode propagate): ${error.message}`,
      };
    }
  });
  return { output: { resourceLogs: batch }, steps };
}

/** Each record's place in the input, under a symbol key: spread copies (a processor changing a record) keep it, JSON leaves it out. */
const PLACE = Symbol("dry-run place");
type Placed = { [PLACE]?: number };

function tagRecords(batch: ResourceLogs[]): void {
  let at = 0;
  for (const rl of batch) for (const sl of rl.scopeLogs ?? []) for (const record of sl.logRecords ?? []) (record as Placed)[PLACE] = at++;
}

function places(batch: ResourceLogs[]): Set<number> {
  const found = new Set<number>();
  for (const rl of batch) for (const sl of rl.scopeLogs ?? []) for (const record of sl.logRecords ?? []) found.add((record as Placed)[PLACE]!);
  return found;
}

/** The step's run; `notSimulated` receives the note of a step that passes records on unchanged instead of running. */
function prepare(processor: ChainProcessor, root: string, overdue: () => void, notSimulated: (note: string) => void): Run {
  const valid = validateProcessor({ type: processor.type, config: processor.config }, root);
  const passThrough: Run = (batch, records) => ({ batch, records });
  switch (valid.type) {
    case "filter": {
      // Without log conditions the collector's filter leaves logs untouched, empty scopes included.
      if (!valid.config.logs?.log_record?.length) return passThrough;
      const drop = compileLogFilter(valid.config);
      return (batch) =>
        filterLogs(batch, (view) => {
          overdue();
          return drop(view);
        });
    }
    case "batch":
      return passThrough;
    case "attributes": {
      const actions = valid.config.actions;
      return (batch, records) => ({ batch: updateRecordAttributes(batch, actions), records });
    }
    case "resource": {
      const actions = valid.config.attributes;
      return (batch, records) => ({ batch: updateResourceAttributes(batch, actions), records });
    }
    case "transform": {
      const compiled = compileTransform(valid.config);
      if ("notSimulated" in compiled) {
        notSimulated(transformNotSimulated(compiled.notSimulated));
        return passThrough;
      }
      return (batch, records) => {
        overdue();
        return { batch: compiled.run(batch), records };
      };
    }
  }
}
