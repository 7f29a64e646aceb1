/**
 * Drops every record that matches any of its OTTL conditions (they are
 * OR-ed). The shape is the upstream filter processor's, which the dry-run
 * evaluates too. Each condition is parsed by the OTTL module in its
 * context, so one that saves here also loads in the collector.
 */
import { Type } from "@sinclair/typebox";
import type { ErrorDetail } from "../../errors.ts";
import type { OttlContext } from "../../ottl/contexts.ts";
import { checkCondition } from "../../ottl/parser.ts";
import { attr, block, raw } from "../../render/alloy-syntax.ts";
import { Closed, StringEnum } from "../schemas.ts";
import { defineProcessor } from "../types.ts";

function conditions(context: OttlContext) {
  return Type.Optional(
    Type.Array(Type.String({ minLength: 1 }), { description: `OTTL conditions in the ${context} context; a match drops the ${context}.` }),
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
    error_mode: StringEnum(["ignore", "propagate", "silent"], {
      default: "ignore",
      description: "What a condition that fails to evaluate does: ignore (log it), silent, or propagate (drop the batch).",
    }),
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
  otelcol(config) {
    const out: Record<string, unknown> = { error_mode: config.error_mode };
    for (const group of ["logs", "metrics", "traces"] as const) {
      const lists = presentLists(config[group]);
      if (lists.length > 0) out[group] = Object.fromEntries(lists);
    }
    return { type: "filter", config: out };
  },
  alloyEntry: "otelcol.processor.filter",
  alloy(config, label, _signal, output) {
    return block("otelcol.processor.filter", label, [
      attr("error_mode", config.error_mode),
      ...(["logs", "metrics", "traces"] as const).map((group) => {
        const lists = presentLists(config[group]);
        return lists.length > 0 && block(group, undefined, lists.map(([name, items]) => attr(name, items.map(raw))));
      }),
      output,
    ]);
  },
});

/** The non-empty condition lists of one group, in schema order. */
function presentLists(group: Record<string, string[] | undefined> | undefined): [string, string[]][] {
  if (group === undefined) return [];
  return LISTS.flatMap(([, list]) => {
    const items = group[list];
    return items !== undefined && items.length > 0 ? [[list, items] as [string, string[]]] : [];
  });
}
