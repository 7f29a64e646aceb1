/**
 * The filter processor on logs, as otelcol's filterprocessor runs it: a
 * record is dropped when any `logs.log_record` condition is true. A record a
 * condition cannot be evaluated on skips that condition under error_mode
 * ignore and silent (the default is ignore); under propagate the error fails
 * the whole batch. Scopes and resources left without records are removed.
 */
import { compileCondition, type LogPredicate, type LogView } from "./compile.ts";
import { OttlEvalError } from "./errors.ts";
import type { LogRecord, ResourceLogs, ScopeLogs } from "./otlp.ts";
import type { FilterConfig } from "./processors.ts";

/** True for a record the filter drops; throws OttlEvalError only under error_mode propagate. */
export function compileLogFilter(config: FilterConfig): LogPredicate {
  const conditions = (config.logs?.log_record ?? []).map((c) => compileCondition(c));
  const n = conditions.length;
  if (config.error_mode === "propagate") {
    return (v) => {
      for (let i = 0; i < n; i++) if (conditions[i]!(v)) return true;
      return false;
    };
  }
  return (v) => {
    for (let i = 0; i < n; i++) {
      try {
        if (conditions[i]!(v)) return true;
      } catch (error) {
        if (!(error instanceof OttlEvalError)) throw error;
      }
    }
    return false;
  };
}

/** The batch without the dropped records, and how many records it keeps. */
export function filterLogs(batch: ResourceLogs[], drop: LogPredicate): { batch: ResourceLogs[]; records: number } {
  const view: LogView = { log: {}, scope: undefined, resource: undefined };
  const out: ResourceLogs[] = [];
  let records = 0;
  for (const rl of batch) {
    view.resource = rl.resource;
    const scopes: ScopeLogs[] = [];
    for (const sl of rl.scopeLogs ?? []) {
      view.scope = sl.scope;
      const all = sl.logRecords ?? [];
      const kept: LogRecord[] = [];
      for (let i = 0; i < all.length; i++) {
        const record = all[i]!;
        view.log = record;
        if (!drop(view)) kept.push(record);
      }
      if (kept.length === 0) continue;
      records += kept.length;
      scopes.push(kept.length === all.length ? sl : { ...sl, logRecords: kept });
    }
    if (scopes.length === 0) continue;
    out.push(scopes.length === rl.scopeLogs!.length && scopes.every((s, i) => s === rl.scopeLogs![i]) ? rl : { ...rl, scopeLogs: scopes });
  }
  return { batch: out, records };
}
