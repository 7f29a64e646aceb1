/**
 * Changes records with OTTL statements (`set(attributes["env"], "prod") where …`), as
 * the collector's transform processor: per signal a list of groups, each with an
 * explicit context and its statements, run in order. The structured form (rather than
 * upstream's flat list of strings, whose context the collector infers) is the one every
 * collector version and Alloy's `otelcol.processor.transform` take alike.
 *
 * Each statement is parsed by the OTTL module in its group's context (editors and their
 * arguments in server/ottl/editors.ts, the `where` condition as the filter's), so one
 * that saves here also loads in the collector; statements calling an editor or
 * converter the checker does not know are refused, not passed through unchecked.
 * The dry-run checks but does not run them, and says so on the step.
 */
import { Type } from "@sinclair/typebox";
import type { Signal } from "../../../../shared/config-records.ts";
import type { StatementContext } from "../../../ottl/contexts.ts";
import {
  conditionBounds,
  MAX_CONDITION_LENGTH,
  MAX_FILTER_CONDITIONS,
  MAX_STATEMENT_GROUPS,
  STATEMENT_LISTS,
  statementProblems,
  type StatementList,
} from "../../../ottl/processors.ts";
import { attr, block, raw } from "../../alloy-syntax.ts";
import { Closed, NoReferences, OttlErrorMode, StringEnum } from "../../schemas.ts";
import { defineProcessor } from "../../types.ts";

const LIST: Record<Signal, StatementList> = { logs: "log_statements", metrics: "metric_statements", traces: "trace_statements" };

/** A reference in a statement would put a collector's attribute into OTTL code, which it must never become. */
const OTTL_REFERENCE =
  "a statement is OTTL code, and a collector's attribute must never become code; to use a value svc sets per collector, set it as a resource attribute (resource processor) and read that";

function groups(signal: Signal, contexts: readonly StatementContext[]) {
  return Type.Optional(
    Type.Array(
      Closed({
        context: StringEnum(contexts, { description: "The OTTL context the statements run in: every resource, scope or record of the batch." }),
        statements: Type.Array(NoReferences(Type.String(conditionBounds), OTTL_REFERENCE), {
          minItems: 1,
          maxItems: MAX_FILTER_CONDITIONS,
          errorMessage: `must be a list of 1 to ${MAX_FILTER_CONDITIONS} statements, each 1 to ${MAX_CONDITION_LENGTH} characters`,
          description: "OTTL statements, editor(arguments) where condition, run in order.",
        }),
      }),
      {
        maxItems: MAX_STATEMENT_GROUPS,
        errorMessage: `must be a list of at most ${MAX_STATEMENT_GROUPS} groups of {context, statements}`,
        description: `Statement groups for ${signal}, run in order.`,
      },
    ),
  );
}

const [logs, metrics, traces] = STATEMENT_LISTS;

export const transformProcessor = defineProcessor({
  kind: "processor",
  type: "transform",
  title: "Transform",
  description: "Changes records with OTTL statements: set, delete or keep attributes, rewrite the body with a pattern, limit or truncate.",
  signals: ["logs", "metrics", "traces"],
  schema: Closed({
    error_mode: OttlErrorMode("a statement"),
    log_statements: groups("logs", logs[1]),
    metric_statements: groups("metrics", metrics[1]),
    trace_statements: groups("traces", traces[1]),
  }),
  check(config, root) {
    return statementProblems(config, root);
  },
  checkSignal(config, signal, root) {
    return STATEMENT_LISTS.filter(([list]) => list !== LIST[signal] && (config[list]?.length ?? 0) > 0).map(([list]) => ({
      path: `${root}.${list}`,
      message: `holds ${list}, which never run in a ${signal} pipeline; use ${LIST[signal]} or move them to a pipeline of their signal`,
    }));
  },
  otelcol(config, signal) {
    const list = LIST[signal];
    return { type: "transform", config: { error_mode: config.error_mode, [list]: config[list] ?? [] } };
  },
  alloyEntry: "otelcol.processor.transform",
  alloy(config, label, signal, output) {
    const list = LIST[signal];
    return block("otelcol.processor.transform", label, [
      attr("error_mode", config.error_mode),
      ...(config[list] ?? []).map((group) => block(list, undefined, [attr("context", group.context), attr("statements", group.statements.map(raw))])),
      output,
    ]);
  },
});
