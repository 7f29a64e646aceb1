/**
 * Dry-run: OTLP JSON logs through a processor chain, in order, as the
 * collector would run it. The result is the Final Output (the surviving
 * records, in the input's shape) and, per processor, how many records went
 * in and came out. Records are shared with the input, never copied, unless
 * a processor changes them; a filter removes the scopes and resources it
 * empties, as the collector's does. A filter under error_mode propagate that
 * cannot evaluate a record fails the batch: that step reports the error and
 * nothing goes further.
 */
import { updateRecordAttributes, updateResourceAttributes } from "./attributes.ts";
import { OttlEvalError } from "./errors.ts";
import { compileLogFilter, filterLogs } from "./filter.ts";
import { validateLogs, type LogsData, type ResourceLogs } from "./otlp.ts";
import { validateProcessor } from "./processors.ts";

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
}

export interface DryRunResult {
  output: LogsData;
  steps: DryRunStep[];
}

type Run = (batch: ResourceLogs[], records: number) => { batch: ResourceLogs[]; records: number };

/** Throws ValidationError naming `processors[i]...` or `input...` for a bad chain or input. */
export function dryRun(input: unknown, processors: readonly ChainProcessor[]): DryRunResult {
  const runs = processors.map((p, i) => prepare(p, `processors[${i}]`));
  const { logs, records: total } = validateLogs(input);
  let batch = logs.resourceLogs;
  let records = total;
  let failed = false;
  const steps: DryRunStep[] = processors.map(({ nodeId, type }, i) => {
    if (failed) return { nodeId, type, in: 0, out: 0 };
    const before = records;
    try {
      ({ batch, records } = runs[i]!(batch, records));
      return { nodeId, type, in: before, out: records };
    } catch (error) {
      if (!(error instanceof OttlEvalError)) throw error;
      failed = true;
      batch = [];
      records = 0;
      return { nodeId, type, in: before, out: 0, error: `a condition failed on a record, so the batch is dropped (error_mode propagate): ${error.message}` };
    }
  });
  return { output: { resourceLogs: batch }, steps };
}

function prepare(processor: ChainProcessor, root: string): Run {
  const valid = validateProcessor({ type: processor.type, config: processor.config }, root);
  const passThrough: Run = (batch, records) => ({ batch, records });
  switch (valid.type) {
    case "filter": {
      // Without log conditions the collector's filter leaves logs untouched, empty scopes included.
      if (!valid.config.logs?.log_record?.length) return passThrough;
      const drop = compileLogFilter(valid.config);
      return (batch) => filterLogs(batch, drop);
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
  }
}
