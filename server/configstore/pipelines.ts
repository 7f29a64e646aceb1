/**
 * Pipelines: a named graph of sources, processors and destinations for one
 * signal. Saved to the working tree only when the graph validates and every
 * route using it still can run (on an Alloy collector, with the same
 * behaviour as on the OpenTelemetry Collector: render/parity.ts).
 */
import { auditEntry, type Actor } from "../audit/audit.ts";
import type { Collectors } from "../collectors/collectors.ts";
import { RUNTIME_OF } from "../collectors/runtime.ts";
import { ConflictError, NotFoundError } from "../errors.ts";
import { routeRuntimeRProblems } from "../render/parity.ts";
import type { ConfigStore } from "./configstore.ts";
import { paths, toYaml } from "./layout.ts";
import type { PipelineRecord, Signal, TopologyInput } from "./records.ts";
import { routeProblems } from "./routes.ts";
import { topologyTag } from "./topology-tag.ts";
import { validateTopology } from "./topology.ts";

export interface PipelineInput {
  name: string;
  signal: Signal;
  topology?: TopologyInput;
}

export class Pipelines {
  constructor(
    private readonly config: ConfigStore,
    private readonly collectors: Collectors,
  ) {}

  async list(): Promise<PipelineRecord[]> {
    return [...(await this.config.worktree()).pipelines.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
  }

  async get(id: string): Promise<PipelineRecord> {
    const pipeline = (await this.config.worktree()).pipelines.get(id);
    if (!pipeline) throw new NotFoundError("Pipeline", id);
    return pipeline;
  }

  async create(who: Actor, input: PipelineInput): Promise<PipelineRecord> {
    const snapshot = await this.config.worktree();
    const pipeline: PipelineRecord = {
      id: Bun.randomUUIDv7(),
      name: input.name.trim(),
      signal: input.signal,
      topology: validateTopology(input.topology ?? { nodes: [], edges: [] }, input.signal, snapshot),
    };
    await this.config.edit(
      [{ path: paths.pipeline(pipeline.id), text: toYaml(pipeline), expect: "absent" }],
      [auditEntry(who, "pipeline.create", "pipeline", pipeline.id, { name: pipeline.name, signal: pipeline.signal })],
    );
    return pipeline;
  }

  async replace(who: Actor, id: string, input: PipelineInput): Promise<PipelineRecord> {
    const current = await this.get(id);
    return this.save(who, { id, name: input.name.trim(), signal: input.signal, topology: input.topology ?? current.topology }, "pipeline.update");
  }

  /** With `base` (the topologyTag of the graph the edit started from), refused while the stored graph is another. */
  async setTopology(who: Actor, id: string, topology: TopologyInput, base?: string): Promise<PipelineRecord> {
    // Read before the comparison, so a change landing after it still fails the write.
    const version = await this.config.version(paths.pipeline(id));
    const current = await this.get(id);
    if (base !== undefined && topologyTag(current.topology) !== base) {
      throw new ConflictError(
        `Pipeline "${current.name}" was changed by someone else since this edit started; reload it and apply the edit again.`,
        "stale_version",
      );
    }
    return this.save(who, { ...current, topology }, "pipeline.topology.update", version);
  }

  private async save(
    who: Actor,
    pipeline: Omit<PipelineRecord, "topology"> & { topology: TopologyInput },
    action: string,
    expected?: number | null,
  ): Promise<PipelineRecord> {
    const snapshot = await this.config.worktree();
    const saved: PipelineRecord = { ...pipeline, topology: validateTopology(pipeline.topology, pipeline.signal, snapshot) };
    const routes = [...snapshot.routes.values()].filter((r) => r.pipelineId === pipeline.id);
    const collectors = new Map(
      await Promise.all(
        [...new Set(routes.map((r) => r.collectorId))].map(async (id) => {
          // A route of a deleted collector renders nowhere: no runtime to hold it to.
          const collector = await this.collectors.get(id).catch((error) => (error instanceof NotFoundError ? undefined : Promise.reject(error)));
          return [id, collector && { name: collector.name, runtime: RUNTIME_OF[collector.managementMode] }] as const;
        }),
      ),
    );
    const problems = routes.flatMap((route) => {
      const collector = collectors.get(route.collectorId);
      const source = snapshot.sources.get(route.sourceId);
      return [
        ...routeProblems(route, saved, snapshot, collector?.runtime),
        // Alloy must see what the OpenTelemetry Collector sees for this source (render/parity.ts).
        ...(collector?.runtime === "alloy" && source
          ? routeRuntimeRProblems(source, saved).map((p) => ({ ...p, message: `on Alloy collector ${collector.name}, ${p.message}` }))
          : []),
      ].map((p) => ({ path: `routes/${route.id}`, message: p.message }));
    });
    if (problems.length > 0) {
      throw new ConflictError(`This change would break routes that use the pipeline: ${problems[0]!.message}.`, "breaks_routes", problems);
    }
    const version = expected !== undefined ? expected : await this.config.version(paths.pipeline(pipeline.id));
    await this.config.edit(
      [{ path: paths.pipeline(pipeline.id), text: toYaml(saved), expect: version ?? "absent" }],
      [auditEntry(who, action, "pipeline", pipeline.id, { name: saved.name, nodes: saved.topology.nodes.length, routes: routes.length })],
    );
    return saved;
  }

  async delete(who: Actor, id: string): Promise<void> {
    const snapshot = await this.config.worktree();
    const pipeline = snapshot.pipelines.get(id);
    if (!pipeline) throw new NotFoundError("Pipeline", id);
    const routes = [...snapshot.routes.values()].filter((r) => r.pipelineId === id);
    if (routes.length > 0) {
      throw new ConflictError(
        `Pipeline '${id}' is still used by ${routes.length} route(s); delete them first.`,
        "still_referenced",
        routes.map((r) => ({ path: `routes/${r.id}`, message: `route ${r.id} on collector ${r.collectorId}` })),
      );
    }
    const version = await this.config.version(paths.pipeline(id));
    await this.config.edit(
      [{ path: paths.pipeline(id), text: null, expect: version ?? undefined }],
      [auditEntry(who, "pipeline.delete", "pipeline", id, { name: pipeline.name })],
    );
  }
}
