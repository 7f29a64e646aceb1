/**
 * Drops every record that matches any of its OTTL conditions (they are
 * OR-ed). The shape is the upstream filter processor's, which the dry-run
 * evaluates too. Each condition is parsed by the OTTL module in its
 * context, so one that saves here also loads in the collector.
 *
 * Conditions must be for the pipeline's signal: the collector runs only the
 * group of the signal a pipeline carries, so metric conditions in a logs
 * pipeline would never drop anything. Collectors from v0.146.0 get the
 * `*_conditions` keys that replace the deprecated groups (its upstream.ts),
 * each list under its explicit context: the processor then parses it with
 * ParseConditionsWithContext(context, …, prependPathsContext=true)
 * (internal/condition/logs.go), so unprefixed paths keep their meaning.
 * Alloy takes `log_conditions` blocks only from v1.15.0 and still accepts the
 * deprecated ones, which it gets.
 */
import { Type } from "@sinclair/typebox";
import type { Signal } from "../../../../shared/config-records.ts";
import type { ErrorDetail } from "../../../errors.ts";
import type { OttlContext } from "../../../ottl/contexts.ts";
import { checkCondition } from "../../../ottl/parser.ts";
import { conditionBounds, conditionListBounds } from "../../../ottl/processors.ts";
import { attr, block, raw } from "../../alloy-syntax.ts";
import { Closed, NoReferences, OttlErrorMode } from "../../schemas.ts";
import { defineProcessor } from "../../types.ts";
import { usesNewKeys } from "../../versions.ts";
import { FILTER_PROCESSOR } from "./upstream.ts";

/** The config group holding each signal's conditions, and the key that replaces it. */
const GROUP: Record<Signal, { group: "logs" | "metrics" | "traces"; conditionsKey: string }> = {
  logs: { group: "logs", conditionsKey: "log_conditions" },
  metrics: { group: "metrics", conditionsKey: "metric_conditions" },
  traces: { group: "traces", conditionsKey: "trace_conditions" },
};

/** A reference in a condition would put a collector's attribute into OTTL code, which it must never become. */
const OTTL_REFERENCE =
  "a condition is OTTL code, and a collector's attribute must never become code; to test a value svc sets per collector, set it as a resource attribute (resource processor) and compare with that";

function conditions(context: OttlContext) {
  return Type.Optional(
    Type.Array(NoReferences(Type.String(conditionBounds), OTTL_REFERENCE), {
      ...conditionListBounds,
      description: `OTTL conditions in the ${context} context (at most ${conditionListBounds.maxItems}); a match drops the ${context}.`,
    }),
  );
}

/** Where each condition list sits in the config, and its OTTL context. */
const LISTS = [
  ["logs", "log_record", "log"],
  ["metrics", "metric", "metric"],
  ["metrics", "datapoint", "datapoint"],
  ["traces", "span", "span"],
  ["traces", "spanevent", "spanevent"],
] as const;

export const filterProcessor = defineProcessor({
  kind: "processor",
  type: "filter",
  title: "Filter",
  description: "Drops records that match any of its OTTL conditions, e.g. health-check requests.",
  signals: ["logs", "metrics", "traces"],
  schema: Closed({
    error_mode: OttlErrorMode("a condition"),
    logs: Type.Optional(Closed({ log_record: conditions("log") }, { title: "Logs" })),
    metrics: Type.Optional(Closed({ metric: conditions("metric"), datapoint: conditions("datapoint") }, { title: "Metrics" })),
    traces: Type.Optional(Closed({ span: conditions("span"), spanevent: conditions("spanevent") }, { title: "Traces" })),
  }),
  check(config, root) {
    const problems: ErrorDetail[] = [];
    let total = 0;
    for (const [group, list, context] of LISTS) {
      const items = (config[group] as Record<string, string[] | undefined> | undefined)?.[list] ?? [];
      total += items.length;
      items.forEach((condition, i) => {
        const message = checkCondition(condition, context);
        if (message) problems.push({ path: `${root}.${group}.${list}[${i}]`, message });
      });
    }
    if (total === 0) problems.unshift({ path: root, message: "a filter needs at least one condition" });
    return problems;
  },
  checkSignal(config, signal, root) {
    return (["logs", "metrics", "traces"] as const)
      .filter((group) => group !== GROUP[signal].group && presentLists(config[group]).length > 0)
      .map((group) => ({
        path: `${root}.${group}`,
        message: `holds ${group} conditions, which never run in a ${signal} pipeline; use ${GROUP[signal].group} conditions or move them to a ${group} pipeline`,
      }));
  },
  otelcol(config, signal, target) {
    const { group, conditionsKey } = GROUP[signal];
    const lists = presentLists(config[group]);
    const out: Record<string, unknown> = { error_mode: config.error_mode };
    if (usesNewKeys(FILTER_PROCESSOR, target)) {
      out[conditionsKey] = lists.map(([list, conditions]) => ({ context: contextOf(list), conditions }));
    } else {
      out[group] = Object.fromEntries(lists);
    }
    return { type: "filter", config: out };
  },
  alloyEntry: "otelcol.processor.filter",
  alloy(config, label, _signal, output) {
    return block("otelcol.processor.filter", label, [
      attr("error_mode", config.error_mode),
      ...(["logs", "metrics", "traces"] as const).map((group) => {
        const lists = presentLists(config[group]);
        return (
          lists.length > 0 &&
          block(
            group,
            undefined,
            lists.map(([name, items]) => attr(name, items.map(raw))),
          )
        );
      }),
      output,
    ]);
  },
});

function contextOf(list: string): OttlContext {
  return LISTS.find(([, name]) => name === list)![2];
}

/** The non-empty condition lists of one group, in schema order. */
function presentLists(group: Record<string, string[] | undefined> | undefined): [string, string[]][] {
  if (group === undefined) return [];
  return LISTS.flatMap(([, list]) => {
    const items = group[list];
    return items !== undefined && items.length > 0 ? [[list, items] as [string, string[]]] : [];
  });
}
