/**
 * The runtime-neutral plan of one configuration: the sources, processors and
 * destinations it runs (configs validated, defaults and overrides applied,
 * names unique) and how data flows between them. Both runtimes render from
 * one plan, so their component names and graphs agree.
 *
 * A route (collector, source, pipeline) becomes one flow: the pipeline graph
 * instantiated for that source. Its processors are the flow's own
 * (`<flow>_<node>`), so two routes never share a processor and per-route
 * throughput stays separable; sources and destinations are shared.
 */
import type { TSchema } from "@sinclair/typebox";
import type { DestinationRecord, PipelineRecord, RouteRecord, Signal, SourceRecord, TopologyNode } from "../../shared/config-records.ts";
import type { CollectorConfigInput } from "../catalog/render-input.ts";
import {
  findType,
  mergeOverrides,
  runtimeProblem,
  validateComponentConfig,
  type ComponentType,
  type DestinationType,
  type ProcessorType,
  type SourceType,
} from "../catalog/index.ts";
import { type Runtime, RUNTIME_NAMES } from "../../shared/vocabulary.ts";
import { ValidationError } from "../errors.ts";
import { isHostEnvRef, isPlainValue, isSecretRef, pathText, sensitiveLeaves, valueAt, withValueAt } from "../../shared/sensitive.ts";
import { secretMarker } from "../secrets/values.ts";
import { HostEnvValue } from "../catalog/host-env.ts";
import { NameTable } from "./names.ts";
import { keyPath, templatedLeaves } from "../catalog/references.ts";

interface Planned<T> {
  name: string;
  type: T;
  /** Validated; a source's or destination's sensitive fields as they render (`renderable`; no processor has one). */
  config: Record<string, unknown>;
  /** Said as comment lines above the component, e.g. what a preview stand-in replaces. */
  comments: string[];
}

export type PlannedSource = Planned<SourceType>;
export type PlannedDestination = Planned<DestinationType>;

export interface Target {
  kind: "processor" | "destination";
  name: string;
  /** A destination target's pipeline node (a node without ref stands for several), for per-node throughput. */
  nodeId?: string;
}

export interface PlannedProcessor extends Planned<ProcessorType> {
  /** The pipeline node it instantiates. */
  nodeId: string;
  next: Target[];
}

export interface Flow {
  name: string;
  signal: Signal;
  /** The pipeline the flow instantiates. */
  pipelineId: string;
  /** Name of the source that feeds the flow. */
  source: string;
  /** Id of that source's record ("" for a preview's stand-in): with pipelineId, what the flow joins, for per-flow throughput. */
  sourceId: string;
  /** Where the source's data goes first. */
  entry: Target[];
  /** In topological order. */
  processors: PlannedProcessor[];
}

export interface Plan {
  sources: PlannedSource[];
  destinations: PlannedDestination[];
  flows: Flow[];
  /** Every config string holding an attribute reference, by where it was written (empty in a preview, which fills none in). */
  references: ReferencedField[];
}

/** A config string holding attribute references, filled in per collector after rendering (attributes.ts). */
export interface ReferencedField {
  /** Where it was written, e.g. `destinations[gw].config.endpoint`. */
  path: string;
  text: string;
  /** Its field's schema: the filled-in value must satisfy it. */
  schema: TSchema;
}

/** The referenced fields of one planned config; `where` names a field by its keys. */
function referencedFields(type: ComponentType, config: Record<string, unknown>, where: (path: string[]) => string): ReferencedField[] {
  return templatedLeaves(type.schema, config).flatMap((leaf) =>
    leaf.schema === undefined ? [] : [{ path: where(leaf.path), text: leaf.text, schema: leaf.schema }],
  );
}

/** A render-time problem, named by the path of what causes it. */
function fail(path: string, message: string): never {
  throw new ValidationError(`The configuration cannot be rendered: ${path}: ${message}.`, [{ path, message }]);
}

/**
 * A validated config with each sensitive field as the writers render it: a
 * stored secret as its marker (delivery alone puts the plaintext there), a
 * value marked not secret as its text, a host environment value as a
 * HostEnvValue. `where(path)` names where a field's value was written.
 */
function renderable(type: SourceType | DestinationType, config: Record<string, unknown>, where: (path: string[]) => string): Record<string, unknown> {
  let out = config;
  for (const leaf of sensitiveLeaves(type.schema, config)) out = withValueAt(out, leaf.path, renderValue(leaf.value, where(leaf.path)));
  return out;
}

function renderValue(value: unknown, at: string): unknown {
  if (isSecretRef(value)) return secretMarker(value.secret);
  if (isPlainValue(value)) return value.value;
  if (isHostEnvRef(value)) return new HostEnvValue(value.env);
  // Validation lets one other form through, a plaintext string: a write seals it
  // before storing, so a stored one predates the vault and must not be rendered.
  return fail(
    at,
    "holds a secret in plain text, stored before secrets were kept in the vault; the server moves such values into the vault " +
      "when it starts: commit that change and publish the new commit (a commit made before the move must be committed again before publishing)",
  );
}

/** Names a sensitive value of a merged config: in the collector's overrides when they set it, else in the record. */
function mergedPath(kind: "sources" | "destinations", id: string, overrides: Record<string, unknown>): (path: string[]) => string {
  return (path) =>
    valueAt(overrides, path) !== undefined ? pathText(`activations.${kind}[${id}].configOverrides`, path) : pathText(`${kind}[${id}].config`, path);
}

function byId<T extends { id: string }>(a: T, b: T): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/** A route's identity within one collector: the source and pipeline it joins. */
const joinKey = (route: RouteRecord) => `${route.sourceId} ${route.pipelineId}`;

function byJoin(a: RouteRecord, b: RouteRecord): number {
  const x = joinKey(a);
  const y = joinKey(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

function sourceType(record: SourceRecord, path: string, signal: Signal, what: string): SourceType {
  const type = findType("source", record.type) ?? fail(path, `source '${record.id}' has unknown type '${record.type}'`);
  if (!type.signals.includes(signal)) fail(path, `source '${record.id}' (${record.type}) does not produce ${signal}, the signal of ${what}`);
  return type;
}

function destinationType(record: DestinationRecord, path: string, signal: Signal, what: string): DestinationType {
  const type = findType("destination", record.type) ?? fail(path, `destination '${record.id}' has unknown type '${record.type}'`);
  if (!type.signals.includes(signal)) fail(path, `destination '${record.id}' (${record.type}) does not accept ${signal}, the signal of ${what}`);
  return type;
}

/** A source or destination type Runtime R cannot run is refused for an Alloy render, saying why. */
function checkRuntime(type: SourceType | DestinationType, record: SourceRecord | DestinationRecord, path: string, runtime: Runtime | undefined): void {
  const problem = runtime === undefined ? undefined : runtimeProblem(type, runtime);
  if (problem !== undefined) fail(path, `${type.kind} '${record.id}' (${record.type}) cannot run on ${RUNTIME_NAMES.alloy}: ${problem}`);
}

/** A source config Runtime R cannot run as Runtime O does (an option Alloy cannot express) is refused for an Alloy render. */
function checkSourceRuntime(type: SourceType, record: SourceRecord, config: Record<string, unknown>, path: string, runtime: Runtime | undefined): void {
  const problem = runtime === "alloy" ? type.alloyProblem?.(config) : undefined;
  if (problem !== undefined) fail(path, `source '${record.id}' (${record.type}) cannot run on ${RUNTIME_NAMES.alloy}: ${problem}`);
}

/** How one flow reads the pipeline graph: which source nodes feed it, and what a destination node stands for. */
interface FlowSpec {
  name: string;
  source: string;
  sourceId: string;
  pipeline: PipelineRecord;
  feeds(node: TopologyNode): boolean;
  /** Keys of the destinations a destination node stands for. */
  destinations(node: TopologyNode, path: string): string[];
}

/** The pipeline graph walked from the flow's source nodes; destination targets carry keys until names are given. */
function buildFlow(spec: FlowSpec, processorNames: NameTable): Flow {
  const { pipeline } = spec;
  const at = `pipelines[${pipeline.id}].topology`;
  const nodes = new Map(pipeline.topology.nodes.map((n) => [n.id, n]));
  const outgoing = new Map<string, string[]>();
  for (const edge of pipeline.topology.edges) {
    if (!nodes.has(edge.source) || !nodes.has(edge.target)) fail(`${at}.edges[${edge.id}]`, "connects a node that does not exist");
    outgoing.set(edge.source, [...(outgoing.get(edge.source) ?? []), edge.target]);
  }
  for (const targets of outgoing.values()) targets.sort();

  const starts = pipeline.topology.nodes.filter((n) => n.kind === "source" && spec.feeds(n)).sort(byId);
  if (starts.length === 0) fail(`${at}.nodes`, `pipeline '${pipeline.id}' has no source node for source '${spec.source}'`);

  const reachable = new Set<string>();
  const stack = starts.map((n) => n.id);
  while (stack.length > 0) {
    const id = stack.pop()!;
    for (const next of outgoing.get(id) ?? []) {
      if (!reachable.has(next) && nodes.get(next)!.kind === "processor") {
        reachable.add(next);
        stack.push(next);
      }
    }
  }

  const order = topologicalOrder(reachable, outgoing, at);
  const names = new Map(order.map((id) => [id, processorNames.claim(`${spec.name} ${id}`)]));
  const targetsOf = (id: string): Target[] =>
    (outgoing.get(id) ?? []).flatMap((next): Target[] => {
      const node = nodes.get(next)!;
      if (node.kind === "source") fail(`${at}.nodes[${id}]`, `has an edge into source node '${next}'`);
      if (node.kind === "processor") return [{ kind: "processor", name: names.get(next)! }];
      return spec.destinations(node, `${at}.nodes[${next}]`).map((key) => ({ kind: "destination", name: key, nodeId: next }));
    });

  const processors = order.map((id): PlannedProcessor => {
    const node = nodes.get(id)!;
    const path = `${at}.nodes[${id}].processor`;
    const processor = node.processor ?? fail(path, `processor node '${id}' has no processor`);
    const type = findType("processor", processor.type) ?? fail(`${path}.type`, `unknown processor type '${processor.type}'`);
    if (!type.signals.includes(pipeline.signal)) fail(`${path}.type`, `processor '${processor.type}' does not handle ${pipeline.signal}`);
    const config = validateComponentConfig("processor", processor.type, processor.config, `${path}.config`);
    const [misfit] = type.checkSignal?.(config as never, pipeline.signal, `${path}.config`) ?? [];
    if (misfit) fail(misfit.path, misfit.message);
    const next = unique(targetsOf(id));
    if (next.length === 0) fail(`${at}.nodes[${id}]`, `processor node '${id}' leads to no destination`);
    return { name: names.get(id)!, nodeId: id, type, config, comments: [], next };
  });

  const entry = unique(starts.flatMap((start) => targetsOf(start.id)));
  if (entry.length === 0) fail(`${at}.nodes[${starts[0]!.id}]`, `source node '${starts[0]!.id}' leads nowhere`);
  return { name: spec.name, signal: pipeline.signal, pipelineId: pipeline.id, source: spec.source, sourceId: spec.sourceId, entry, processors };
}

/** Targets in first-seen order, each once: two edges to the same place carry the data once. */
function unique(targets: readonly Target[]): Target[] {
  const seen = new Set<string>();
  return targets.filter((t) => {
    const key = `${t.kind}/${t.name}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Kahn's algorithm over the reachable processors, taking the smallest ready id first so the order is stable. */
function topologicalOrder(ids: ReadonlySet<string>, outgoing: ReadonlyMap<string, string[]>, at: string): string[] {
  const indegree = new Map([...ids].map((id) => [id, 0]));
  for (const id of ids) {
    for (const next of outgoing.get(id) ?? []) if (ids.has(next)) indegree.set(next, indegree.get(next)! + 1);
  }
  const ready = [...ids].filter((id) => indegree.get(id) === 0).sort();
  const order: string[] = [];
  while (ready.length > 0) {
    const id = ready.shift()!;
    order.push(id);
    for (const next of outgoing.get(id) ?? []) {
      if (!ids.has(next)) continue;
      indegree.set(next, indegree.get(next)! - 1);
      if (indegree.get(next) === 0) {
        ready.push(next);
        ready.sort();
      }
    }
  }
  if (order.length !== ids.size) fail(`${at}.edges`, "the processors form a cycle");
  return order;
}

/** Gives destination targets their names, once every used destination is known. */
function nameDestinations(flows: Flow[], names: ReadonlyMap<string, string>): Flow[] {
  const rename = (t: Target): Target => (t.kind === "destination" ? { ...t, name: names.get(t.name)! } : t);
  return flows.map((f) => ({
    ...f,
    entry: f.entry.map(rename),
    processors: f.processors.map((p) => ({ ...p, next: p.next.map(rename) })),
  }));
}

function usedDestinationKeys(flows: readonly Flow[]): string[] {
  const keys = new Set<string>();
  for (const f of flows) {
    for (const t of [...f.entry, ...f.processors.flatMap((p) => p.next)]) if (t.kind === "destination") keys.add(t.name);
  }
  return [...keys].sort();
}

/**
 * One collector's plan: a flow per route of this collector and per source a
 * matched pipeline names (`input.matched`), sources and destinations with its
 * overrides merged. With a `runtime`, what that runtime
 * cannot run is refused.
 */
export function planCollector(input: CollectorConfigInput, runtime?: Runtime): Plan {
  const { activations } = input;
  // Ordered and named by what they join, not by their ids, so that collectors
  // with the same activations and routes render to the same bytes.
  const routes = input.routes.filter((r) => r.collectorId === input.collector.id).sort(byJoin);
  const matchedIds = new Set(input.matched ?? []);
  const routed: Join[] = routes.map((route) => {
    const at = `routes[${route.id}]`;
    const pipeline = input.pipelines.get(route.pipelineId) ?? fail(`${at}.pipelineId`, `pipeline '${route.pipelineId}' does not exist`);
    const record = input.sources.get(route.sourceId) ?? fail(`${at}.sourceId`, `source '${route.sourceId}' does not exist`);
    const activation =
      activations.sources.find((a) => a.sourceId === record.id) ??
      fail(`${at}.sourceId`, `source '${record.id}' is not active on collector '${input.collector.id}'`);
    const type = sourceType(record, `${at}.sourceId`, pipeline.signal, `pipeline '${pipeline.id}'`);
    checkRuntime(type, record, `${at}.sourceId`, runtime);
    return { key: joinKey(route), pipeline, record, overrides: activation.configOverrides, type, routed: true, matched: matchedIds.has(pipeline.id) };
  });
  // A matched pipeline joins each source its topology names (a route of the same join is that one, explicit).
  const joined = new Set(routed.map((j) => j.key));
  const matched: Join[] = [...matchedIds].sort().flatMap((pipelineId) => {
    const pipeline = input.pipelines.get(pipelineId) ?? fail(`pipelines[${pipelineId}]`, `pipeline '${pipelineId}' does not exist`);
    const refs = new Map<string, TopologyNode>();
    for (const node of [...pipeline.topology.nodes].sort(byId))
      if (node.kind === "source" && node.ref !== undefined && !refs.has(node.ref)) refs.set(node.ref, node);
    return [...refs.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .filter(([ref]) => !joined.has(`${ref} ${pipeline.id}`))
      .map(([ref, node]): Join => {
        const path = `pipelines[${pipeline.id}].topology.nodes[${node.id}].ref`;
        const record = input.sources.get(ref) ?? fail(path, `source '${ref}' does not exist`);
        const type = sourceType(record, path, pipeline.signal, `pipeline '${pipeline.id}'`);
        checkRuntime(type, record, path, runtime);
        const overrides = activations.sources.find((a) => a.sourceId === record.id)?.configOverrides ?? {};
        return { key: `${ref} ${pipeline.id}`, pipeline, record, overrides, type, routed: false, matched: true };
      });
  });
  const joins = [...routed, ...matched];

  const references: ReferencedField[] = [];
  const sourceNames = new NameTable();
  const sources = new Map<string, PlannedSource>();
  for (const j of [...joins].sort((a, b) => byId(a.record, b.record))) {
    if (sources.has(j.record.id)) continue;
    const merged = mergeOverrides("source", j.record.type, j.record.config, j.overrides, `activations.sources[${j.record.id}].configOverrides`);
    const config = renderable(j.type, merged, mergedPath("sources", j.record.id, j.overrides));
    checkSourceRuntime(j.type, j.record, config, `sources[${j.record.id}].config`, runtime);
    sources.set(j.record.id, { name: sourceNames.claim(j.record.name, j.record.id), type: j.type, config, comments: [] });
    references.push(...referencedFields(j.type, config, mergedPath("sources", j.record.id, j.overrides)));
  }

  const activeDestinations = new Map(activations.destinations.map((a) => [a.destinationId, a]));
  const destinationRecord = (id: string, path: string): DestinationRecord => input.destinations.get(id) ?? fail(path, `destination '${id}' does not exist`);
  const accepts = (id: string, signal: Signal): boolean =>
    findType("destination", destinationRecord(id, `activations.destinations[${id}]`).type)?.signals.includes(signal) ?? false;
  const collector = `collector '${input.collector.id}'`;

  const flowNames = new NameTable();
  const processorNames = new NameTable();
  const flows = joins.map(({ key, pipeline, record, routed, matched }) =>
    buildFlow(
      {
        name: flowNames.claim(`${pipeline.name} ${sources.get(record.id)!.name}`, key),
        source: sources.get(record.id)!.name,
        sourceId: record.id,
        pipeline,
        // Without a route, a matched pipeline runs only the nodes that name its source: nothing attaches another.
        feeds: (node) => node.ref === record.id || (routed && node.ref === undefined),
        destinations(node, path) {
          const what = `pipeline '${pipeline.id}'`;
          if (node.ref !== undefined) {
            const destination = destinationRecord(node.ref, `${path}.ref`);
            // A pipeline the collector matches brings its destinations; a route alone needs them active.
            if (!matched && !activeDestinations.has(destination.id)) {
              fail(`${path}.ref`, `destination node '${node.id}' names destination '${destination.id}', which is not active on ${collector}`);
            }
            destinationType(destination, `${path}.ref`, pipeline.signal, what);
            return [destination.id];
          }
          const matching = [...activeDestinations.keys()].sort().filter((id) => accepts(id, pipeline.signal));
          if (matching.length === 0 && !matched) {
            fail(path, `destination node '${node.id}' stands for every active destination that accepts ${pipeline.signal}, and ${collector} has none`);
          }
          return matching;
        },
      },
      processorNames,
    ),
  );

  const destinationNames = new NameTable();
  const keys = usedDestinationKeys(flows);
  const destinations = keys.map((id): PlannedDestination => {
    // A destination only a matched pipeline brings has no activation: problems name the record.
    const at = activeDestinations.has(id) ? `activations.destinations[${id}]` : `destinations[${id}]`;
    const record = destinationRecord(id, at);
    const configOverrides = activeDestinations.get(id)?.configOverrides ?? {};
    const merged = mergeOverrides("destination", record.type, record.config, configOverrides, `activations.destinations[${id}].configOverrides`);
    const type = findType("destination", record.type)!;
    checkRuntime(type, record, at, runtime);
    const config = renderable(type, merged, mergedPath("destinations", id, configOverrides));
    references.push(...referencedFields(type, config, mergedPath("destinations", id, configOverrides)));
    return { name: destinationNames.claim(record.name, record.id), type, config, comments: [] };
  });
  // A pipeline node runs once per flow through it, from one config: one field each.
  const nodes = new Set<string>();
  for (const f of flows) {
    for (const p of f.processors) {
      const root = `pipelines[${f.pipelineId}].topology.nodes[${p.nodeId}].processor.config`;
      if (nodes.has(root)) continue;
      nodes.add(root);
      references.push(...referencedFields(p.type, p.config, (path) => keyPath(root, path)));
    }
  }
  return finish([...sources.values()], keys, destinations, flows, references);
}

/** One source joined to one pipeline on this collector: by a route, or because the collector matches the pipeline. */
interface Join {
  key: string;
  pipeline: PipelineRecord;
  record: SourceRecord;
  overrides: Record<string, unknown>;
  type: SourceType;
  /** Joined by a route: its source must be active and feeds the source nodes without ref too. */
  routed: boolean;
  /** The collector matches the pipeline: its referenced destinations need no activation. */
  matched: boolean;
}

/** Names the flows' destination targets and puts everything in name order. */
function finish(sources: PlannedSource[], keys: string[], destinations: PlannedDestination[], flows: Flow[], references: ReferencedField[] = []): Plan {
  const names = new Map(keys.map((key, i) => [key, destinations[i]!.name]));
  return { sources: sortByName(sources), destinations: sortByName(destinations), flows: sortByName(nameDestinations(flows, names)), references };
}

/** Key of the preview stand-ins; record ids are never empty. */
const STAND_IN = "";

/**
 * One pipeline on its own: referenced records as they are (no collector, so
 * no overrides); a source node without ref becomes a default OTLP receiver
 * and a destination node without ref a debug exporter, each saying so. Alloy
 * cannot load the debug exporter, so there it stays unwired (the Alloy
 * renderer writes no block for a destination without a Runtime R form).
 */
export function planPreview(
  pipeline: PipelineRecord,
  sourceRecords: ReadonlyMap<string, SourceRecord>,
  destinationRecords: ReadonlyMap<string, DestinationRecord>,
  runtime: Runtime = "otelcol",
): Plan {
  const what = `pipeline '${pipeline.id}'`;
  const at = `pipelines[${pipeline.id}].topology`;
  const sourceNodes = pipeline.topology.nodes.filter((n) => n.kind === "source").sort(byId);
  const unreferenced = (kind: TopologyNode["kind"]) =>
    pipeline.topology.nodes
      .filter((n) => n.kind === kind && n.ref === undefined)
      .map((n) => n.id)
      .sort();

  const sourceNames = new NameTable();
  const sources = new Map<string, PlannedSource>();
  const refs = [...new Set(sourceNodes.flatMap((n) => (n.ref === undefined ? [] : [n.ref])))].sort();
  for (const ref of refs) {
    const node = sourceNodes.find((n) => n.ref === ref)!;
    const path = `${at}.nodes[${node.id}].ref`;
    const record = sourceRecords.get(ref) ?? fail(path, `source '${ref}' does not exist`);
    const type = sourceType(record, path, pipeline.signal, what);
    checkRuntime(type, record, path, runtime);
    const root = `sources[${record.id}].config`;
    const config = renderable(type, validateComponentConfig("source", record.type, record.config, root), (p) => pathText(root, p));
    checkSourceRuntime(type, record, config, root, runtime);
    sources.set(ref, { name: sourceNames.claim(record.name, record.id), type, config, comments: [] });
  }
  const openSources = unreferenced("source");
  if (openSources.length > 0) {
    sources.set(STAND_IN, {
      name: sourceNames.claim("preview"),
      type: findType("source", "otlp")!,
      config: validateComponentConfig("source", "otlp", {}),
      comments: [standInNote("source", openSources, "default OTLP receiver")],
    });
  }

  const openDestinations = unreferenced("destination");
  const flowNames = new NameTable();
  const processorNames = new NameTable();
  const flows = [...sources.entries()].map(([key, source]) =>
    buildFlow(
      {
        name: flowNames.claim(`${pipeline.name} ${source.name}`, pipeline.id),
        source: source.name,
        sourceId: key,
        pipeline,
        feeds: (node) => (node.ref ?? STAND_IN) === key,
        destinations(node, path) {
          if (node.ref === undefined) return [STAND_IN];
          const record = destinationRecords.get(node.ref) ?? fail(`${path}.ref`, `destination '${node.ref}' does not exist`);
          checkRuntime(destinationType(record, `${path}.ref`, pipeline.signal, what), record, `${path}.ref`, runtime);
          return [record.id];
        },
      },
      processorNames,
    ),
  );

  // Records claim their names first, so a record named "preview" keeps it.
  const destinationNames = new NameTable();
  const keys = usedDestinationKeys(flows);
  const ordered = [...keys.filter((k) => k !== STAND_IN), ...keys.filter((k) => k === STAND_IN)];
  const destinations = ordered.map((key): PlannedDestination => {
    if (key === STAND_IN) {
      const type = findType("destination", "debug")!;
      const unwired = runtime === "alloy" && type.alloyUnavailable !== undefined;
      return {
        name: destinationNames.claim("preview"),
        type,
        config: validateComponentConfig("destination", "debug", {}),
        comments: [unwired ? unwiredNote(openDestinations, type.alloyUnavailable!) : standInNote("destination", openDestinations, "debug exporter")],
      };
    }
    const record = destinationRecords.get(key)!;
    const root = `destinations[${record.id}].config`;
    const type = findType("destination", record.type)!;
    const config = renderable(type, validateComponentConfig("destination", record.type, record.config, root), (p) => pathText(root, p));
    return { name: destinationNames.claim(record.name, record.id), type, config, comments: [] };
  });
  return finish([...sources.values()], ordered, destinations, flows);
}

/** `Preview: source node "in" has no ref and renders as this default OTLP receiver.` */
function standInNote(kind: string, ids: readonly string[], what: string): string {
  const quoted = ids.map((id) => `"${id}"`).join(", ");
  return ids.length === 1
    ? `Preview: ${kind} node ${quoted} has no ref and renders as this ${what}.`
    : `Preview: ${kind} nodes ${quoted} have no ref and render as this ${what}.`;
}

/** `Preview: destination node "out" has no ref and is left unwired: <why>.` */
function unwiredNote(ids: readonly string[], why: string): string {
  const quoted = ids.map((id) => `"${id}"`).join(", ");
  return ids.length === 1
    ? `Preview: destination node ${quoted} has no ref and is left unwired: ${why}.`
    : `Preview: destination nodes ${quoted} have no ref and are left unwired: ${why}.`;
}

function sortByName<T extends { name: string }>(items: T[]): T[] {
  return items.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
