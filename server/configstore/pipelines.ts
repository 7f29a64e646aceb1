/**
 * Pipelines: a named graph of sources, processors and destinations for one
 * signal. Saved to the working tree only when the graph validates and every
 * route using it still can run (on an Alloy collector, with the same
 * behaviour as on the OpenTelemetry Collector: render/parity.ts).
 */
import { auditEntry, type Actor } from "../audit/audit.ts";
import type { Collectors } from "../collectors/collectors.ts";
import { RUNTIME_OF } from "../../shared/vocabulary.ts";
import { ConflictError, NotFoundError, ValidationError } from "../errors.ts";
import { MatcherListError, parseMatcherList } from "../../shared/matchers.ts";
import { routeRuntimeRProblems } from "../render/parity.ts";
import type { ConfigStore, Edit, Worktree } from "./configstore.ts";
import { paths, toYaml, type Snapshot } from "./layout.ts";
import { collectorNameMap, collectorNamesFrom, routeLabel } from "./names.ts";
import type { PipelineRecord, Signal, TopologyInput } from "../../shared/config-records.ts";
import { routeProblems } from "./routes.ts";
import { topologyTag } from "../../shared/topology-tag.ts";
import { validateTopology } from "./topology.ts";
import { putLayout, splitLayout, withLayout, type PipelineLayout } from "./pipeline-layout.ts";
import { matchedPipelineIds, matcherPipelines } from "../collectors/matching.ts";
import { alloyUnrunnable } from "./alloy-matches.ts";
import type { AppliedPipeline } from "../../shared/pipelines.ts";

export interface PipelineInput {
  name: string;
  signal: Signal;
  topology?: TopologyInput;
  matchers?: string[];
}

/** The matchers as stored: each must parse (400 naming `matchers[i]` and the column); none is stored as absent. */
export function checkMatchers(matchers: readonly string[]): Pick<PipelineRecord, "matchers"> {
  try {
    parseMatcherList(matchers, "matchers");
  } catch (error) {
    if (!(error instanceof MatcherListError)) throw error;
    throw new ValidationError(`Invalid matchers: ${error.message}.`, error.details);
  }
  return matchers.length > 0 ? { matchers: [...matchers] } : {};
}

export class Pipelines {
  constructor(
    private readonly config: ConfigStore,
    private readonly collectors: Collectors,
  ) {}

  async list(): Promise<PipelineRecord[]> {
    const layouts = await this.config.layouts();
    return [...(await this.config.worktree()).pipelines.values()].map((p) => withLayout(p, layouts.get(p.id))).sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  /** With its canvas positions (pipeline-layout.ts). */
  async get(id: string): Promise<PipelineRecord> {
    const pipeline = (await this.config.worktree()).pipelines.get(id);
    if (!pipeline) throw new NotFoundError("Pipeline", id);
    return withLayout(pipeline, await this.config.layout(id));
  }

  /**
   * The pipelines that apply to one collector in the working tree, and why: each
   * route naming it, and each pipeline whose matchers its attributes satisfy.
   * Routes first, then matches, each in pipeline name order.
   */
  async forCollector(collectorId: string): Promise<AppliedPipeline[]> {
    const collector = await this.collectors.get(collectorId);
    const snapshot = await this.config.worktree();
    const byName = (a: AppliedPipeline, b: AppliedPipeline) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.pipelineId < b.pipelineId ? -1 : 1);
    const routed = [...snapshot.routes.values()]
      .filter((r) => r.collectorId === collectorId)
      .map(
        (r): AppliedPipeline => ({
          pipelineId: r.pipelineId,
          name: snapshot.pipelines.get(r.pipelineId)?.name ?? r.pipelineId,
          via: { route: r.id, sourceId: r.sourceId },
        }),
      )
      .sort(byName);
    const matched = matchedPipelineIds(collector, matcherPipelines(snapshot.pipelines), this.collectors.trust.keys())
      .map((id): AppliedPipeline => {
        const pipeline = snapshot.pipelines.get(id)!;
        return { pipelineId: id, name: pipeline.name, via: { matchers: pipeline.matchers ?? [] } };
      })
      .sort(byName);
    return [...routed, ...matched];
  }

  /**
   * Refused (409 `breaks_matched_collectors`) when an Alloy collector the pipeline's matchers
   * select would not run a referenced source through it as the OpenTelemetry Collector does
   * (render/parity.ts), as a route on one is. Collectors are read only when a source has such
   * a problem.
   */
  private async checkMatchedAlloy(pipeline: PipelineRecord, snapshot: Snapshot): Promise<void> {
    const [unrunnable] = alloyUnrunnable({ ...snapshot, pipelines: new Map([[pipeline.id, pipeline]]) });
    if (!unrunnable) return;
    const alloy = (await this.collectors.all()).find(
      (c) => RUNTIME_OF[c.managementMode] === "alloy" && matchedPipelineIds(c, [unrunnable.selects], this.collectors.trust.keys()).length > 0,
    );
    if (!alloy) return;
    const details = unrunnable.problems.map((problem) => ({
      path: "matchers",
      message: `on Alloy collector ${alloy.name}, which the matchers select, ${problem}`,
    }));
    throw new ConflictError(
      `This pipeline would not run the same on Alloy collectors its matchers select: ${details[0]!.message}.`,
      "breaks_matched_collectors",
      details,
    );
  }

  /** 400 naming each matcher (`matchers[i]`) on a key only collectors' untrusted reports hold (collectors/trust.ts). */
  private async refuseUntrusted(matchers: readonly string[] | undefined): Promise<void> {
    if (matchers === undefined) return;
    await this.collectors.refuseUntrusted(
      parseMatcherList(matchers).map((m) => m.name),
      "matchers",
    );
  }

  async create(who: Actor, input: PipelineInput): Promise<PipelineRecord> {
    return this.config.guarded(async (tree) => {
      const pipeline: PipelineRecord = {
        id: Bun.randomUUIDv7(),
        name: input.name.trim(),
        signal: input.signal,
        topology: validateTopology(input.topology ?? { nodes: [], edges: [] }, input.signal, tree.snapshot),
        ...checkMatchers(input.matchers ?? []),
      };
      await this.refuseUntrusted(pipeline.matchers);
      await this.checkMatchedAlloy(pipeline, tree.snapshot);
      const { topology, layout } = splitLayout(pipeline.topology, undefined);
      await this.config.edit(
        [{ path: paths.pipeline(pipeline.id), text: toYaml({ ...pipeline, topology }), expect: "absent" }, ...keepRefs(tree, pipeline)],
        [auditEntry(who, "pipeline.create", "pipeline", pipeline.id, { name: pipeline.name, signal: pipeline.signal, matchers: pipeline.matchers ?? [] })],
        [putLayout(pipeline.id, layout)],
      );
      return pipeline;
    });
  }

  async replace(who: Actor, id: string, input: PipelineInput): Promise<PipelineRecord> {
    const matchers = input.matchers === undefined ? undefined : checkMatchers(input.matchers);
    await this.refuseUntrusted(matchers?.matchers);
    return this.save(
      who,
      id,
      (current, layout) => ({
        id,
        name: input.name.trim(),
        signal: input.signal,
        topology: input.topology ?? withLayout(current, layout).topology,
        ...(matchers ?? (current.matchers ? { matchers: current.matchers } : {})),
      }),
      "pipeline.update",
    );
  }

  /** With `base` (the topologyTag of the graph the edit started from), refused while the stored graph is another. */
  async setTopology(who: Actor, id: string, topology: TopologyInput, base?: string): Promise<PipelineRecord> {
    return this.save(
      who,
      id,
      (current, layout) => {
        // The editor's base is the graph it was shown, positions included.
        if (base !== undefined && topologyTag(withLayout(current, layout).topology) !== base) {
          throw new ConflictError(
            `Pipeline "${current.name}" was changed by someone else since this edit started; reload it and apply the edit again.`,
            "stale_version",
          );
        }
        return { ...current, topology };
      },
      "pipeline.topology.update",
    );
  }

  /**
   * Saves `change` of the stored pipeline when the graph validates and every
   * route using it can still run. The routes are read at one moment (fresh),
   * the write is guarded by the pipeline's version from that read (a route
   * made since keeps the pipeline, so one write fails) and keeps every record
   * the new graph names.
   */
  private async save(
    who: Actor,
    id: string,
    change: (current: PipelineRecord, layout: PipelineLayout | undefined) => Omit<PipelineRecord, "topology"> & { topology: TopologyInput },
    action: string,
  ): Promise<PipelineRecord> {
    return this.config.guarded(async (tree) => {
      const snapshot = tree.snapshot;
      const current = snapshot.pipelines.get(id);
      if (!current) throw new NotFoundError("Pipeline", id);
      const before = await this.config.layout(id);
      const pipeline = change(current, before);
      const saved: PipelineRecord = { ...pipeline, topology: validateTopology(pipeline.topology, pipeline.signal, snapshot) };
      await this.checkMatchedAlloy(saved, snapshot);
      const routes = [...snapshot.routes.values()].filter((r) => r.pipelineId === id);
      const collectors = new Map(
        await Promise.all(
          [...new Set(routes.map((r) => r.collectorId))].map(async (collectorId) => {
            // A route of a deleted collector renders nowhere: no runtime to hold it to.
            const collector = await this.collectors.get(collectorId).catch((error) => (error instanceof NotFoundError ? undefined : Promise.reject(error)));
            return [collectorId, collector && { name: collector.name, runtime: RUNTIME_OF[collector.managementMode] }] as const;
          }),
        ),
      );
      const problems = routes.flatMap((route) => {
        const collector = collectors.get(route.collectorId);
        const source = snapshot.sources.get(route.sourceId);
        return [
          ...routeProblems(route, saved, snapshot, collector?.runtime, collector?.name),
          // Alloy must see what the OpenTelemetry Collector sees for this source (render/parity.ts).
          ...(collector?.runtime === "alloy" && source
            ? routeRuntimeRProblems(source, saved).map((p) => ({ ...p, message: `on Alloy collector ${collector.name}, ${p.message}` }))
            : []),
        ].map((p) => ({ path: `routes/${route.id}`, message: p.message }));
      });
      if (problems.length > 0) {
        throw new ConflictError(`This change would break routes that use the pipeline: ${problems[0]!.message}.`, "breaks_routes", problems);
      }
      // Positions go to the layout document; git keeps the graph (a move alone writes the same file).
      const { topology, layout } = splitLayout(saved.topology, current.topology);
      await this.config.edit(
        [{ path: paths.pipeline(id), text: toYaml({ ...saved, topology }), expect: tree.version(paths.pipeline(id)) ?? "present" }, ...keepRefs(tree, saved)],
        [
          auditEntry(who, action, "pipeline", id, {
            name: saved.name,
            nodes: saved.topology.nodes.length,
            routes: routes.length,
            matchers: saved.matchers ?? [],
          }),
        ],
        [putLayout(id, layout)],
      );
      return withLayout({ ...saved, topology }, layout);
    }, true);
  }

  async delete(who: Actor, id: string): Promise<void> {
    // Fresh (one moment): no route may use it; a route made since keeps the pipeline, so the delete fails.
    await this.config.guarded(async (tree) => {
      const pipeline = tree.snapshot.pipelines.get(id);
      if (!pipeline) throw new NotFoundError("Pipeline", id);
      const routes = [...tree.snapshot.routes.values()].filter((r) => r.pipelineId === id);
      if (routes.length > 0) {
        const collectors = await collectorNameMap(
          routes.map((r) => r.collectorId),
          collectorNamesFrom(this.collectors),
        );
        throw new ConflictError(
          `Pipeline "${pipeline.name}" is still used by ${routes.length} route(s); delete them first.`,
          "still_referenced",
          routes.map((r) => ({ path: `routes/${r.id}`, message: routeLabel(r, tree.snapshot, collectors) })),
        );
      }
      await this.config.edit(
        [{ path: paths.pipeline(id), text: null, expect: tree.version(paths.pipeline(id)) ?? "present" }],
        [auditEntry(who, "pipeline.delete", "pipeline", id, { name: pipeline.name })],
      );
    }, true);
  }
}

/** The sources and destinations a pipeline's nodes name, kept at the versions read (see Worktree.keep). */
function keepRefs(tree: Worktree, pipeline: PipelineRecord): Edit[] {
  const refs = new Set<string>();
  for (const node of pipeline.topology.nodes) {
    if (node.ref === undefined) continue;
    if (node.kind === "source") refs.add(paths.source(node.ref));
    else if (node.kind === "destination") refs.add(paths.destination(node.ref));
  }
  return [...refs].map((path) => tree.keep(path));
}
