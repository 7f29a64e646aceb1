/**
 * Routes attach a pipeline to one source active on one collector. What a
 * collector runs is exactly its routes; a route is refused unless the source
 * is active there and the pipeline can take it, and, on an Alloy collector,
 * unless its processors read only fields Alloy delivers as the OpenTelemetry
 * Collector does for that source (render/parity.ts).
 */
import { auditEntry, type Actor } from "../audit/audit.ts";
import { findType, runtimeProblem } from "../catalog/index.ts";
import type { Collector } from "../../shared/collectors.ts";
import type { Collectors } from "../collectors/collectors.ts";
import { RUNTIME_OF, type Runtime, RUNTIME_NAMES } from "../../shared/vocabulary.ts";
import { ConflictError, NotFoundError, ValidationError, type ErrorDetail } from "../errors.ts";
import { routeRuntimeRProblems } from "../render/parity.ts";
import { runtimeDifferences } from "../render/differences.ts";
import type { RuntimeDifference } from "../../shared/rollouts.ts";
import type { ConfigStore, Edit, Worktree } from "./configstore.ts";
import { paths, toYaml, type Snapshot } from "./layout.ts";
import { routeTitle } from "./names.ts";
import type { PipelineRecord, RouteRecord } from "../../shared/config-records.ts";

export interface RouteInput {
  collectorId: string;
  sourceId: string;
  pipelineId: string;
}

/**
 * Why this route cannot run with this pipeline, as error details (empty when
 * it can). With the collector's `runtime`, a source type or destinations the
 * pipeline would send to that the runtime cannot run are problems too.
 */
export function routeProblems(route: RouteInput, pipeline: PipelineRecord, snapshot: Snapshot, runtime?: Runtime, collectorName?: string): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  const source = snapshot.sources.get(route.sourceId);
  if (!source) return [{ path: "sourceId", message: `source "${route.sourceId}" does not exist` }];
  const activations = snapshot.activations.get(route.collectorId);
  if (!activations?.sources.some((a) => a.sourceId === route.sourceId)) {
    const collector = collectorName === undefined ? route.collectorId : `"${collectorName}"`;
    problems.push({ path: "sourceId", message: `source "${source.name}" is not active on collector ${collector}; activate it first` });
  }
  const type = findType("source", source.type);
  const unrunnable = runtime === undefined || type === undefined ? undefined : runtimeProblem(type, runtime);
  if (unrunnable !== undefined) {
    problems.push({ path: "sourceId", message: `source "${source.name}" (${source.type}) cannot run on this ${RUNTIME_NAMES.alloy} collector: ${unrunnable}` });
  }
  if (!type?.signals.includes(pipeline.signal)) {
    problems.push({
      path: "pipelineId",
      message: `pipeline "${pipeline.name}" carries ${pipeline.signal}, which source "${source.name}" (${source.type}) does not produce`,
    });
  }
  const entries = pipeline.topology.nodes.filter((n) => n.kind === "source" && (n.ref === undefined || n.ref === route.sourceId));
  if (entries.length === 0) {
    problems.push({
      path: "pipelineId",
      message: `pipeline "${pipeline.name}" has no source node for source "${source.name}" (add one without a ref, or with this ref)`,
    });
  }
  if (runtime !== undefined) problems.push(...runtimeProblems(route, pipeline, snapshot, runtime));
  return problems;
}

/** The destinations this route would send to (by ref, or active and matching a node without ref) that `runtime` cannot run. */
function runtimeProblems(route: RouteInput, pipeline: PipelineRecord, snapshot: Snapshot, runtime: Runtime): ErrorDetail[] {
  const nodes = pipeline.topology.nodes.filter((n) => n.kind === "destination");
  const active = snapshot.activations.get(route.collectorId)?.destinations.map((a) => a.destinationId) ?? [];
  const ids = new Set(nodes.flatMap((n) => (n.ref !== undefined ? [n.ref] : active)));
  return [...ids].sort().flatMap((id) => {
    const record = snapshot.destinations.get(id);
    const type = record && findType("destination", record.type);
    if (!record || !type?.signals.includes(pipeline.signal)) return [];
    const problem = runtimeProblem(type, runtime);
    return problem === undefined
      ? []
      : [
          {
            path: "pipelineId",
            message: `pipeline "${pipeline.name}" sends to destination "${record.name}" (${record.type}), which cannot run on this ${RUNTIME_NAMES.alloy} collector: ${problem}`,
          },
        ];
  });
}

export class Routes {
  constructor(
    private readonly config: ConfigStore,
    private readonly collectors: Collectors,
  ) {}

  async list(filter: { collectorId?: string; pipelineId?: string } = {}): Promise<RouteRecord[]> {
    return [...(await this.config.worktree()).routes.values()]
      .filter(
        (r) =>
          (filter.collectorId === undefined || r.collectorId === filter.collectorId) && (filter.pipelineId === undefined || r.pipelineId === filter.pipelineId),
      )
      .sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  async get(id: string): Promise<RouteRecord> {
    const route = (await this.config.worktree()).routes.get(id);
    if (!route) throw new NotFoundError("Route", id);
    return route;
  }

  /** A route as written, with what its source delivers otherwise on the collector's runtime than on Runtime O (a warning; render/differences.ts). */
  async create(who: Actor, input: RouteInput): Promise<RouteRecord & { differences: RuntimeDifference[] }> {
    const collector = await this.collectors.get(input.collectorId);
    return this.config.guarded(async (tree) => {
      const route: RouteRecord = { id: Bun.randomUUIDv7(), collectorId: input.collectorId, sourceId: input.sourceId, pipelineId: input.pipelineId };
      await this.config.edit(
        [{ path: paths.route(route.id), text: toYaml(route), expect: "absent" }, ...this.check(tree, collector, input)],
        [auditEntry(who, "route.create", "route", route.id, { ...input })],
      );
      return { ...route, differences: differencesOf(collector, tree.snapshot, input) };
    });
  }

  /** Point an existing route elsewhere; checked exactly like a new one, guarded by the version the checks read. */
  async update(who: Actor, id: string, input: RouteInput): Promise<RouteRecord & { differences: RuntimeDifference[] }> {
    const collector = await this.collectors.get(input.collectorId);
    return this.config.guarded(async (tree) => {
      const before = tree.snapshot.routes.get(id);
      if (!before) throw new NotFoundError("Route", id);
      const also = this.check(tree, collector, input, id);
      const route: RouteRecord = { id, collectorId: input.collectorId, sourceId: input.sourceId, pipelineId: input.pipelineId };
      await this.config.edit(
        [{ path: paths.route(id), text: toYaml(route), expect: tree.version(paths.route(id)) ?? "present" }, ...also],
        [
          auditEntry(who, "route.update", "route", id, {
            ...input,
            previous: { collectorId: before.collectorId, sourceId: before.sourceId, pipelineId: before.pipelineId },
          }),
        ],
      );
      return { ...route, differences: differencesOf(collector, tree.snapshot, input) };
    });
  }

  /**
   * What would stop a collector's activations and routes from running on
   * `runtime`, for a change of its management mode: a source or destination
   * that runtime cannot run, or a route it would render differently (render/parity.ts).
   */
  async problemsOnRuntime(collectorId: string, runtime: Runtime): Promise<ErrorDetail[]> {
    const snapshot = await this.config.worktree();
    const problems: ErrorDetail[] = [];
    for (const activation of snapshot.activations.get(collectorId)?.sources ?? []) {
      const record = snapshot.sources.get(activation.sourceId);
      const type = record && findType("source", record.type);
      const problem = type && runtimeProblem(type, runtime);
      if (problem) problems.push({ path: "managementMode", message: `active source "${record.name}" (${record.type}) cannot run there: ${problem}` });
    }
    for (const activation of snapshot.activations.get(collectorId)?.destinations ?? []) {
      const record = snapshot.destinations.get(activation.destinationId);
      const type = record && findType("destination", record.type);
      const problem = type && runtimeProblem(type, runtime);
      if (problem) problems.push({ path: "managementMode", message: `active destination "${record.name}" (${record.type}) cannot run there: ${problem}` });
    }
    for (const route of snapshot.routes.values()) {
      const pipeline = snapshot.pipelines.get(route.pipelineId);
      const source = snapshot.sources.get(route.sourceId);
      if (route.collectorId !== collectorId || !pipeline || !source) continue;
      const found = [...routeProblems(route, pipeline, snapshot, runtime), ...(runtime === "alloy" ? routeRuntimeRProblems(source, pipeline) : [])];
      problems.push(...found.map((p) => ({ path: "managementMode", message: `${routeTitle(route, snapshot)}: ${p.message}` })));
    }
    return problems;
  }

  /**
   * Everything a route needs to run, and no other route (but `self`) doing
   * the same. Answers the files it relied on, kept at the versions read (the
   * source, the pipeline, the collector's activations), for the route's write:
   * deleting or changing any of them meanwhile fails one of the two writes.
   */
  private check(tree: Worktree, collector: Collector, input: RouteInput, self?: string): Edit[] {
    const snapshot = tree.snapshot;
    const source = snapshot.sources.get(input.sourceId);
    if (!source) throw new NotFoundError("Source", input.sourceId);
    const pipeline = snapshot.pipelines.get(input.pipelineId);
    if (!pipeline) throw new NotFoundError("Pipeline", input.pipelineId);
    const runtime = RUNTIME_OF[collector.managementMode];
    const problems = routeProblems(input, pipeline, snapshot, runtime, collector.name);
    if (runtime === "alloy") problems.push(...routeRuntimeRProblems(source, pipeline));
    if (problems.length > 0) throw new ValidationError(`The route cannot run: ${problems[0]!.message}.`, problems);
    const duplicate = [...snapshot.routes.values()].find(
      (r) => r.id !== self && r.collectorId === input.collectorId && r.sourceId === input.sourceId && r.pipelineId === input.pipelineId,
    );
    if (duplicate) throw new ConflictError(`This route already exists: ${routeTitle(duplicate, snapshot)} ('${duplicate.id}').`, "already_exists");
    return [tree.keep(paths.source(source.id)), tree.keep(paths.pipeline(pipeline.id)), tree.keep(paths.activations(input.collectorId))];
  }

  async delete(who: Actor, id: string): Promise<void> {
    await this.config.guarded(async (tree) => {
      const route = tree.snapshot.routes.get(id);
      if (!route) throw new NotFoundError("Route", id);
      await this.config.edit(
        [{ path: paths.route(id), text: null, expect: tree.version(paths.route(id)) ?? "present" }],
        [auditEntry(who, "route.delete", "route", id, { collectorId: route.collectorId, pipelineId: route.pipelineId })],
      );
    });
  }
}

/** The route's source type delivers otherwise on the collector's runtime: said when the route is written (the check has found the source). */
function differencesOf(collector: Collector, snapshot: Snapshot, input: RouteInput): RuntimeDifference[] {
  return runtimeDifferences(RUNTIME_OF[collector.managementMode], [snapshot.sources.get(input.sourceId)!.type]);
}
