/**
 * One behaviour on both runtimes. A source's records reach the first
 * processor shaped by the receiver of each runtime; svc's Alloy chains make
 * them equal where they can (catalog/sources/log-records.ts). Where a record
 * part still differs for a source, a processor that reads it would keep,
 * drop or change other records on Runtime R than on Runtime O, so the route
 * is refused on Runtime R: at route creation when the collector is an Alloy
 * one, and when its config is rendered (publish, preview). The dry-run
 * reports the same verdict.
 *
 * A source's own config may also hold an option Runtime R cannot express
 * (SourceType.alloyProblem, e.g. filelog's multiline.line_end_pattern): the
 * route is refused on Runtime R for that as well, naming `sourceId`.
 *
 * What a processor reads: every path of its log filter conditions (walked in
 * the OTTL syntax tree), the metric as a whole for a metric condition (host
 * metrics differ as a whole), the attribute key of each attributes/resource action
 * (insert, update, hash and delete all depend on the key's presence), and every path
 * of a transform's log statements, its targets included, and the metric as a whole
 * for its metric statements.
 */
import { findType, SOURCE_TYPES } from "../catalog/registry.ts";
import { validateComponentConfig } from "../catalog/validate.ts";
import { LOG_RECORD_SHAPES, LOG_SOURCE_TYPES, type LogSourceType, type RecordPart } from "../catalog/sources/log-records.ts";
import type { PipelineRecord, SourceRecord } from "../../shared/config-records.ts";
import { ValidationError, type ErrorDetail } from "../errors.ts";
import type { StatementContext } from "../ottl/contexts.ts";
import { logFieldsRead, statementFieldsRead, type FieldRead } from "../ottl/reads.ts";
import type { Plan } from "./plan.ts";
import { RUNTIME_NAMES } from "../../shared/vocabulary.ts";

/** A processor as configured, and the path of its config for messages. */
export interface ConfiguredProcessor {
  type: string;
  config: Record<string, unknown>;
  /** e.g. `pipelines[p1].topology.nodes[drop].processor.config` */
  path: string;
}

interface Read {
  read: FieldRead;
  /** Where the read is configured. */
  path: string;
  /** What reads, for messages: `condition "…"`, `action delete of "k"`. */
  what: string;
}

const PART_OF_FIELD: Readonly<Record<string, RecordPart>> = {
  body: "body",
  severity_number: "severity",
  severity_text: "severity",
  attributes: "attributes",
  "resource.attributes": "resource",
  "instrumentation_scope.name": "scope",
  "instrumentation_scope.version": "scope",
  "instrumentation_scope.attributes": "scope",
};

const PART_NOUN: Readonly<Record<RecordPart, string>> = {
  body: "body is",
  severity: "severity is",
  attributes: "attributes are",
  resource: "resource attributes are",
  scope: "instrumentation scope is",
};

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === "string") : [];
}

function actions(value: unknown): { key: string; action: string }[] {
  return Array.isArray(value) ? value.filter((a): a is { key: string; action: string } => typeof a?.key === "string") : [];
}

/** The record fields one processor reads, with the config path of each. */
function readsOf(processor: ConfiguredProcessor): Read[] {
  const { config, path } = processor;
  switch (processor.type) {
    case "filter": {
      const logs = (config.logs ?? {}) as Record<string, unknown>;
      const metrics = (config.metrics ?? {}) as Record<string, unknown>;
      return [
        ...stringList(logs.log_record).flatMap((condition, i) =>
          logFieldsRead(condition).map((read) => ({ read, path: `${path}.logs.log_record[${i}]`, what: `condition ${JSON.stringify(condition)}` })),
        ),
        // A metric condition reads the metric as a whole (its name, type, data points).
        ...(["metric", "datapoint"] as const).flatMap((list) =>
          stringList(metrics[list]).map((condition, i) => ({
            read: { field: "metric", text: "the metric" },
            path: `${path}.metrics.${list}[${i}]`,
            what: `condition ${JSON.stringify(condition)}`,
          })),
        ),
      ];
    }
    case "attributes":
    case "resource": {
      const [list, field] = processor.type === "attributes" ? [config.actions, "attributes"] : [config.attributes, "resource.attributes"];
      const key = processor.type === "attributes" ? "actions" : "attributes";
      return actions(list).map((a, i) => ({
        read: { field, key: a.key, text: `${field}[${JSON.stringify(a.key)}]` },
        path: `${path}.${key}[${i}].key`,
        what: `the ${a.action} action on ${JSON.stringify(a.key)}`,
      }));
    }
    case "transform": {
      const groups = (list: string) =>
        (Array.isArray(config[list]) ? (config[list] as unknown[]) : []).filter(
          (g): g is { context: StatementContext; statements: unknown } => typeof (g as { context?: unknown })?.context === "string",
        );
      return [
        ...groups("log_statements").flatMap((group, g) =>
          stringList(group.statements).flatMap((statement, i) =>
            statementFieldsRead(statement, group.context).map((read) => ({
              read,
              path: `${path}.log_statements[${g}].statements[${i}]`,
              what: `statement ${JSON.stringify(statement)}`,
            })),
          ),
        ),
        ...groups("metric_statements").flatMap((group, g) =>
          stringList(group.statements).map((statement, i) => ({
            read: { field: "metric", text: "the metric" },
            path: `${path}.metric_statements[${g}].statements[${i}]`,
            what: `statement ${JSON.stringify(statement)}`,
          })),
        ),
      ];
    }
    default:
      return [];
  }
}

/**
 * A source type whose records or metrics differ as a whole between the
 * runtimes (catalog SourceType.delivery, differsAs "whole": host metrics,
 * Kubernetes events), so that any read of them does: the difference, else undefined.
 */
function wholeDifference(sourceType: string): string | undefined {
  const delivery = findType("source", sourceType)?.delivery;
  return delivery?.differsAs === "whole" ? (delivery.difference ?? undefined) : undefined;
}

/** How a read differs between the runtimes for a source type, or undefined when both give the same value. */
export function runtimeDifference(sourceType: string, read: FieldRead): string | undefined {
  const whole = wholeDifference(sourceType);
  if (whole !== undefined) return whole;
  if (!(LOG_SOURCE_TYPES as readonly string[]).includes(sourceType)) return undefined;
  const part = PART_OF_FIELD[read.field];
  if (part === undefined) return undefined;
  const shape = LOG_RECORD_SHAPES[sourceType as LogSourceType][part];
  const differs = shape.differs === true || (Array.isArray(shape.differs) && (read.key === undefined || shape.differs.includes(read.key)));
  if (!differs) return undefined;
  return `a ${sourceType} record's ${PART_NOUN[part]} ${shape.otelcol} on ${RUNTIME_NAMES.otelcol} but ${shape.alloy} on ${RUNTIME_NAMES.alloy}`;
}

/** Problems named once per path: the first differing read of each condition or action. */
function oncePerPath(problems: ErrorDetail[]): ErrorDetail[] {
  const seen = new Set<string>();
  return problems.filter((p) => !seen.has(p.path) && seen.add(p.path));
}

/** Every condition or action of these processors that reads a value differing on Runtime R for records of this source type. */
export function runtimeRProblems(sourceType: string, processors: readonly ConfiguredProcessor[]): ErrorDetail[] {
  return oncePerPath(
    processors.flatMap((p) =>
      readsOf(p).flatMap(({ read, path, what }) => {
        const why = runtimeDifference(sourceType, read);
        if (why === undefined) return [];
        return [
          {
            path,
            message: `${what} reads ${read.text}, and ${why}, so it would act on other records on an Alloy collector; read a field both runtimes share, or run this source on the ${RUNTIME_NAMES.otelcol}`,
          },
        ];
      }),
    ),
  );
}

/** Refuses a Runtime R plan in which a flow's processors read a field that differs for its source. */
export function assertRuntimeRParity(plan: Plan): void {
  const typeOf = new Map(plan.sources.map((s) => [s.name, s.type.type]));
  const problems = plan.flows.flatMap((flow) =>
    runtimeRProblems(
      typeOf.get(flow.source)!,
      flow.processors.map((p) => ({
        type: p.type.type,
        config: p.config,
        path: `pipelines[${flow.pipelineId}].topology.nodes[${p.nodeId}].processor.config`,
      })),
    ),
  );
  // A pipeline routed from two sources of one type names its conditions once.
  const unique = oncePerPath(problems);
  if (unique.length > 0) {
    throw new ValidationError(`The configuration cannot be rendered for Alloy: ${unique[0]!.path}: ${unique[0]!.message}.`, unique);
  }
}

/** The processors a source's data passes through in a pipeline: those reachable from the source nodes that take it. */
export function processorsFor(pipeline: PipelineRecord, sourceId: string): ConfiguredProcessor[] {
  const nodes = new Map(pipeline.topology.nodes.map((n) => [n.id, n]));
  const next = new Map<string, string[]>();
  for (const e of pipeline.topology.edges) next.set(e.source, [...(next.get(e.source) ?? []), e.target]);
  const seen = new Set<string>();
  const stack = pipeline.topology.nodes.filter((n) => n.kind === "source" && (n.ref === undefined || n.ref === sourceId)).map((n) => n.id);
  while (stack.length > 0) {
    for (const id of next.get(stack.pop()!) ?? []) {
      const node = nodes.get(id);
      if (node?.kind === "processor" && node.processor && !seen.has(id)) {
        seen.add(id);
        stack.push(id);
      }
    }
  }
  return pipeline.topology.nodes
    .filter((n) => seen.has(n.id))
    .map((n) => ({ type: n.processor!.type, config: n.processor!.config, path: `topology.nodes[${n.id}].processor.config` }));
}

/** Why a source's own config cannot run the same on an Alloy collector (an option Alloy cannot express), or undefined. */
export function sourceRuntimeRProblem(source: SourceRecord): string | undefined {
  const type = findType("source", source.type);
  if (type?.alloyProblem === undefined) return undefined;
  let config: Record<string, unknown>;
  try {
    config = validateComponentConfig("source", source.type, source.config);
  } catch {
    return undefined; // an invalid stored config is reported where it is rendered
  }
  return type.alloyProblem(config);
}

/** Why a route of this source through this pipeline cannot run the same on an Alloy collector (empty when it can). */
export function routeRuntimeRProblems(source: SourceRecord, pipeline: PipelineRecord): ErrorDetail[] {
  const own = sourceRuntimeRProblem(source);
  return [
    ...(own === undefined ? [] : [{ path: "sourceId", message: `source "${source.name}" (${source.type}): ${own}` }]),
    ...runtimeRProblems(source.type, processorsFor(pipeline, source.id)).map((p) => ({
      path: "pipelineId",
      message: `pipeline "${pipeline.name}" at ${p.path}: ${p.message}`,
    })),
  ];
}

export interface RuntimeParity {
  sourceType: string;
  /** True when records of this source type meet the chain alike on Runtime O and Runtime R, so a dry-run's result holds on both. */
  holds: boolean;
  problems: ErrorDetail[];
}

/** Log source types with a parity verdict: those modelled part by part, and those that differ as a whole. */
const PARITY_LOG_TYPES: readonly string[] = [
  ...LOG_SOURCE_TYPES,
  ...SOURCE_TYPES.filter((t) => t.signals.includes("logs") && t.delivery.differsAs === "whole").map((t) => t.type),
];

/** The log source types that may feed a pipeline: its source nodes' sources, or every log source type when a node has no ref. */
export function logSourceTypesFeeding(pipeline: PipelineRecord, sources: ReadonlyMap<string, SourceRecord>): string[] {
  const nodes = pipeline.topology.nodes.filter((n) => n.kind === "source");
  const types = nodes.some((n) => n.ref === undefined) ? [...PARITY_LOG_TYPES] : nodes.map((n) => sources.get(n.ref!)?.type ?? "");
  return [...new Set(types)].filter((t) => PARITY_LOG_TYPES.includes(t)).sort();
}

/** The parity verdict of a processor chain for each source type. */
export function chainRuntimeParity(sourceTypes: readonly string[], chain: readonly ConfiguredProcessor[]): RuntimeParity[] {
  return sourceTypes.map((sourceType) => {
    const problems = runtimeRProblems(sourceType, chain);
    return { sourceType, holds: problems.length === 0, problems };
  });
}
