/**
 * What is active on each collector (`collectors/<id>/activations.yaml`):
 * sources and destinations with per-collector `configOverrides`, which must
 * still satisfy the type's schema once merged over the record's config.
 * Activating again replaces the overrides, so automation can re-run safely.
 * A source's merged config keeps to the host-path policy (catalog/hostpaths.ts).
 */
import { auditEntry, type Actor } from "../audit/audit.ts";
import type { HostPaths } from "../catalog/hostpaths.ts";
import { findType, mergeOverrides, runtimeProblem } from "../catalog/index.ts";
import type { Editor } from "./components.ts";
import type { Collectors } from "../collectors/collectors.ts";
import { RUNTIME_OF } from "../collectors/runtime.ts";
import { ConflictError, NotFoundError, ValidationError } from "../errors.ts";
import type { ConfigStore } from "./configstore.ts";
import { paths, toYaml } from "./layout.ts";
import type { CollectorActivations, DestinationActivation, SourceActivation } from "./records.ts";

export class Activations {
  constructor(
    private readonly config: ConfigStore,
    private readonly collectors: Collectors,
    private readonly hostPaths: HostPaths | null = null,
  ) {}

  async get(collectorId: string): Promise<CollectorActivations> {
    await this.collectors.get(collectorId);
    return (await this.config.worktree()).activations.get(collectorId) ?? { collectorId, sources: [], destinations: [] };
  }

  private async save(who: Actor, next: CollectorActivations, action: string, details: Record<string, unknown>): Promise<void> {
    const path = paths.activations(next.collectorId);
    const version = await this.config.version(path);
    const empty = next.sources.length === 0 && next.destinations.length === 0;
    await this.config.edit(
      [{ path, text: empty ? null : toYaml(next), expect: version ?? "absent" }],
      [auditEntry(who, action, "collector", next.collectorId, details)],
    );
  }

  async activateSource(who: Editor, collectorId: string, input: { sourceId: string; configOverrides?: Record<string, unknown> }): Promise<SourceActivation> {
    const current = await this.get(collectorId);
    const source = (await this.config.worktree()).sources.get(input.sourceId);
    if (!source) throw new NotFoundError("Source", input.sourceId);
    const activation: SourceActivation = { sourceId: source.id, configOverrides: input.configOverrides ?? {} };
    const merged = mergeOverrides("source", source.type, source.config, activation.configOverrides) as Record<string, unknown>;
    // The source's own paths and this collector's current ones were approved when saved.
    const before = current.sources.find((a) => a.sourceId === source.id);
    const kept = [source.config, ...(before ? [mergeOverrides("source", source.type, source.config, before.configOverrides) as Record<string, unknown>] : [])];
    this.hostPaths?.enforce(who, source.type, merged, kept, "configOverrides");
    const sources = current.sources.filter((a) => a.sourceId !== source.id).concat(activation);
    await this.save(who, { ...current, sources }, "collector.source.activate", { sourceId: source.id });
    return activation;
  }

  async deactivateSource(who: Actor, collectorId: string, sourceId: string): Promise<void> {
    const current = await this.get(collectorId);
    if (!current.sources.some((a) => a.sourceId === sourceId)) throw new NotFoundError("Source activation", sourceId);
    const routes = [...(await this.config.worktree()).routes.values()].filter((r) => r.collectorId === collectorId && r.sourceId === sourceId);
    if (routes.length > 0) {
      throw new ConflictError(
        `Routes still read this source on the collector; delete them first.`,
        "still_referenced",
        routes.map((r) => ({ path: `routes/${r.id}`, message: `route ${r.id} to pipeline ${r.pipelineId}` })),
      );
    }
    const sources = current.sources.filter((a) => a.sourceId !== sourceId);
    await this.save(who, { ...current, sources }, "collector.source.deactivate", { sourceId });
  }

  async activateDestination(
    who: Actor,
    collectorId: string,
    input: { destinationId: string; configOverrides?: Record<string, unknown>; tags?: Record<string, string> },
  ): Promise<DestinationActivation> {
    const current = await this.get(collectorId);
    const destination = (await this.config.worktree()).destinations.get(input.destinationId);
    if (!destination) throw new NotFoundError("Destination", input.destinationId);
    const type = findType("destination", destination.type);
    const collector = await this.collectors.get(collectorId);
    const unavailable = type && runtimeProblem(type, RUNTIME_OF[collector.managementMode]);
    if (unavailable) {
      const message = `destination "${destination.name}" (${destination.type}) cannot run on collector ${collectorId}, a Runtime R (Alloy) collector: ${unavailable}`;
      throw new ValidationError(`The destination cannot be activated: ${message}.`, [{ path: "destinationId", message }]);
    }
    const activation: DestinationActivation = {
      destinationId: destination.id,
      configOverrides: input.configOverrides ?? {},
      tags: input.tags ?? {},
    };
    mergeOverrides("destination", destination.type, destination.config, activation.configOverrides);
    const destinations = current.destinations.filter((a) => a.destinationId !== destination.id).concat(activation);
    await this.save(who, { ...current, destinations }, "collector.destination.activate", { destinationId: destination.id });
    return activation;
  }

  async deactivateDestination(who: Actor, collectorId: string, destinationId: string): Promise<void> {
    const current = await this.get(collectorId);
    if (!current.destinations.some((a) => a.destinationId === destinationId)) {
      throw new NotFoundError("Destination activation", destinationId);
    }
    const snapshot = await this.config.worktree();
    const users = [...snapshot.routes.values()].filter(
      (r) =>
        r.collectorId === collectorId &&
        snapshot.pipelines.get(r.pipelineId)?.topology.nodes.some((n) => n.kind === "destination" && n.ref === destinationId),
    );
    if (users.length > 0) {
      throw new ConflictError(
        `Pipelines routed on this collector send to this destination; change them or delete their routes first.`,
        "still_referenced",
        users.map((r) => ({ path: `routes/${r.id}`, message: `route ${r.id} uses pipeline ${r.pipelineId}` })),
      );
    }
    const destinations = current.destinations.filter((a) => a.destinationId !== destinationId);
    await this.save(who, { ...current, destinations }, "collector.destination.deactivate", { destinationId });
  }
}
