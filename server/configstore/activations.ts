/**
 * What is active on each collector (`collectors/<id>/activations.yaml`):
 * sources and destinations with per-collector `configOverrides`, which must
 * still satisfy the type's schema once merged over the record's config.
 * Activating again replaces the overrides, so automation can re-run safely.
 * A source's merged config keeps to the host-path policy (catalog/hostpaths.ts).
 * Sensitive fields in overrides take the API's forms on a write, a keep
 * marker keeping what this collector's override stores at that path, and
 * show their read form on every answer (secrets/fields.ts).
 */
import { auditEntry, type Actor } from "../audit/audit.ts";
import type { HostPaths } from "../catalog/hostpaths.ts";
import { findType, mergeOverrides, runtimeProblem } from "../catalog/index.ts";
import type { Editor } from "./components.ts";
import type { Collectors } from "../collectors/collectors.ts";
import { RUNTIME_OF, RUNTIME_NAMES } from "../../shared/vocabulary.ts";
import { ConflictError, NotFoundError, ValidationError } from "../errors.ts";
import { keepStored, readForm, sealPlaintext, secretAudit } from "../secrets/fields.ts";
import type { SecretVault } from "../secrets/vault.ts";
import type { AuditEntry, WriteOp } from "../store/store.ts";
import type { ConfigStore, Edit, Worktree } from "./configstore.ts";
import { paths, toYaml, type Snapshot } from "./layout.ts";
import { routeTitle } from "./names.ts";
import type { CollectorActivations, DestinationActivation, SourceActivation } from "../../shared/config-records.ts";

type Kind = "source" | "destination";
type Overrides = Record<string, unknown>;

export class Activations {
  constructor(
    private readonly config: ConfigStore,
    private readonly collectors: Collectors,
    private readonly vault: SecretVault,
    private readonly hostPaths: HostPaths | null = null,
  ) {}

  /** The collector's activations as the API shows them: sensitive override values in their read form. */
  async get(collectorId: string): Promise<CollectorActivations> {
    await this.collectors.get(collectorId);
    const snapshot = await this.config.worktree();
    const activations = activationsOf(snapshot, collectorId);
    return {
      ...activations,
      sources: activations.sources.map((a) => shown(snapshot, "source", a.sourceId, a)),
      destinations: activations.destinations.map((a) => shown(snapshot, "destination", a.destinationId, a)),
    };
  }

  /**
   * Writes a collector's activations computed from `tree`, guarded by the
   * version of the file `tree` held, with `also` (the records the new list
   * depends on, kept at the versions read), `audit` (more entries) and `ops`
   * (the vault's new versions) in the same write.
   */
  private async save(
    who: Actor,
    tree: Worktree,
    next: CollectorActivations,
    action: string,
    details: Record<string, unknown>,
    also: Edit[] = [],
    audit: AuditEntry[] = [],
    ops: WriteOp[] = [],
  ): Promise<void> {
    const path = paths.activations(next.collectorId);
    const empty = next.sources.length === 0 && next.destinations.length === 0;
    await this.config.edit(
      [{ path, text: empty ? null : toYaml(next), expect: tree.version(path) ?? "absent" }, ...also],
      [auditEntry(who, action, "collector", next.collectorId, details), ...audit],
      ops,
    );
  }

  /**
   * Overrides as the API sent them, in the tree's forms: keep markers
   * replaced by what `stored` (this collector's current overrides of the
   * record) holds at their path, checked merged over the record's config,
   * plaintext sealed; with the audit of the secrets set or cleared.
   */
  private async toStored(
    who: Actor,
    kind: Kind,
    record: { id: string; type: string; config: Overrides },
    collectorId: string,
    input: Overrides,
    stored: Overrides | undefined,
  ): Promise<{ overrides: Overrides; merged: Overrides; audit: AuditEntry[]; ops: WriteOp[] }> {
    const schema = findType(kind, record.type)?.schema;
    const overrides = schema ? keepStored(schema, input, stored, "configOverrides") : input;
    const merged = mergeOverrides(kind, record.type, record.config, overrides);
    const sealed = await sealPlaintext(this.vault, who, schema!, overrides, stored);
    const audit = secretAudit(who, schema!, stored, sealed.config, {
      type: "collector",
      id: collectorId,
      root: "configOverrides",
      details: { [`${kind}Id`]: record.id },
    });
    return { overrides: sealed.config, merged, audit, ops: sealed.ops };
  }

  async activateSource(who: Editor, collectorId: string, input: { sourceId: string; configOverrides?: Record<string, unknown> }): Promise<SourceActivation> {
    const collector = await this.collectors.get(collectorId);
    return this.config.guarded(async (tree) => {
      const current = activationsOf(tree.snapshot, collectorId);
      const source = tree.snapshot.sources.get(input.sourceId);
      if (!source) throw new NotFoundError("Source", input.sourceId);
      const type = findType("source", source.type);
      const unavailable = type && runtimeProblem(type, RUNTIME_OF[collector.managementMode]);
      if (unavailable) {
        const message = `source "${source.name}" (${source.type}) cannot run on collector ${collectorId}, an ${RUNTIME_NAMES.alloy} collector: ${unavailable}`;
        throw new ValidationError(`The source cannot be activated: ${message}.`, [{ path: "sourceId", message }]);
      }
      const before = current.sources.find((a) => a.sourceId === source.id);
      const stored = await this.toStored(who, "source", source, collectorId, input.configOverrides ?? {}, before?.configOverrides);
      const activation: SourceActivation = { sourceId: source.id, configOverrides: stored.overrides };
      // The source's own paths and this collector's current ones were approved when saved.
      const kept = [
        source.config,
        ...(before ? [mergeOverrides("source", source.type, source.config, before.configOverrides) as Record<string, unknown>] : []),
      ];
      this.hostPaths?.enforce(who, source.type, stored.merged, kept, "configOverrides");
      const sources = current.sources.filter((a) => a.sourceId !== source.id).concat(activation);
      await this.save(
        who,
        tree,
        { ...current, sources },
        "collector.source.activate",
        { sourceId: source.id },
        [tree.keep(paths.source(source.id))],
        stored.audit,
        stored.ops,
      );
      return shown(tree.snapshot, "source", source.id, activation);
    });
  }

  async deactivateSource(who: Actor, collectorId: string, sourceId: string): Promise<void> {
    await this.collectors.get(collectorId);
    // Fresh (one moment): no route may read the source here; a route made since keeps this file, so the write fails.
    await this.config.guarded(async (tree) => {
      const current = activationsOf(tree.snapshot, collectorId);
      if (!current.sources.some((a) => a.sourceId === sourceId)) throw new NotFoundError("Source activation", sourceId);
      const routes = [...tree.snapshot.routes.values()].filter((r) => r.collectorId === collectorId && r.sourceId === sourceId);
      if (routes.length > 0) {
        throw new ConflictError(
          `Routes still read this source on the collector; delete them first.`,
          "still_referenced",
          routes.map((r) => ({ path: `routes/${r.id}`, message: routeTitle(r, tree.snapshot) })),
        );
      }
      const sources = current.sources.filter((a) => a.sourceId !== sourceId);
      const cleared = clearedSecrets(
        who,
        tree.snapshot,
        "source",
        sourceId,
        collectorId,
        current.sources.find((a) => a.sourceId === sourceId)!.configOverrides,
      );
      await this.save(who, tree, { ...current, sources }, "collector.source.deactivate", { sourceId }, [], cleared);
    }, true);
  }

  async activateDestination(
    who: Editor,
    collectorId: string,
    input: { destinationId: string; configOverrides?: Record<string, unknown>; tags?: Record<string, string> },
  ): Promise<DestinationActivation> {
    const collector = await this.collectors.get(collectorId);
    return this.config.guarded(async (tree) => {
      const current = activationsOf(tree.snapshot, collectorId);
      const destination = tree.snapshot.destinations.get(input.destinationId);
      if (!destination) throw new NotFoundError("Destination", input.destinationId);
      const type = findType("destination", destination.type);
      const unavailable = type && runtimeProblem(type, RUNTIME_OF[collector.managementMode]);
      if (unavailable) {
        const message = `destination "${destination.name}" (${destination.type}) cannot run on collector ${collectorId}, an ${RUNTIME_NAMES.alloy} collector: ${unavailable}`;
        throw new ValidationError(`The destination cannot be activated: ${message}.`, [{ path: "destinationId", message }]);
      }
      const before = current.destinations.find((a) => a.destinationId === destination.id);
      const stored = await this.toStored(who, "destination", destination, collectorId, input.configOverrides ?? {}, before?.configOverrides);
      // TLS files are host paths too (hostpaths.ts); the destination's own and this collector's current ones were approved.
      const kept = [
        destination.config,
        ...(before ? [mergeOverrides("destination", destination.type, destination.config, before.configOverrides) as Record<string, unknown>] : []),
      ];
      this.hostPaths?.enforce(who, destination.type, stored.merged, kept, "configOverrides");
      const activation: DestinationActivation = { destinationId: destination.id, configOverrides: stored.overrides, tags: input.tags ?? {} };
      const destinations = current.destinations.filter((a) => a.destinationId !== destination.id).concat(activation);
      await this.save(
        who,
        tree,
        { ...current, destinations },
        "collector.destination.activate",
        { destinationId: destination.id },
        [tree.keep(paths.destination(destination.id))],
        stored.audit,
        stored.ops,
      );
      return shown(tree.snapshot, "destination", destination.id, activation);
    });
  }

  async deactivateDestination(who: Actor, collectorId: string, destinationId: string): Promise<void> {
    await this.collectors.get(collectorId);
    await this.config.guarded(async (tree) => {
      const snapshot = tree.snapshot;
      const current = activationsOf(snapshot, collectorId);
      if (!current.destinations.some((a) => a.destinationId === destinationId)) {
        throw new NotFoundError("Destination activation", destinationId);
      }
      const users = [...snapshot.routes.values()].filter(
        (r) =>
          r.collectorId === collectorId &&
          snapshot.pipelines.get(r.pipelineId)?.topology.nodes.some((n) => n.kind === "destination" && n.ref === destinationId),
      );
      if (users.length > 0) {
        throw new ConflictError(
          `Pipelines routed on this collector send to this destination; change them or delete their routes first.`,
          "still_referenced",
          users.map((r) => ({ path: `routes/${r.id}`, message: `${routeTitle(r, snapshot)} sends to it` })),
        );
      }
      const destinations = current.destinations.filter((a) => a.destinationId !== destinationId);
      // Kept: a pipeline edit sending to it (which keeps it too) cannot land unseen between this read and write.
      const keep = snapshot.destinations.has(destinationId) ? [tree.keep(paths.destination(destinationId))] : [];
      const overrides = current.destinations.find((a) => a.destinationId === destinationId)!.configOverrides;
      const cleared = clearedSecrets(who, snapshot, "destination", destinationId, collectorId, overrides);
      await this.save(who, tree, { ...current, destinations }, "collector.destination.deactivate", { destinationId }, keep, cleared);
    }, true);
  }
}

/** The schema of the record an activation names, when both are known. */
function schemaOf(snapshot: Snapshot, kind: Kind, id: string) {
  const record = kind === "source" ? snapshot.sources.get(id) : snapshot.destinations.get(id);
  return record && findType(kind, record.type)?.schema;
}

/** An activation as the API shows it: its overrides' sensitive values in their read form. */
function shown<T extends { configOverrides: Overrides }>(snapshot: Snapshot, kind: Kind, id: string, activation: T): T {
  return { ...activation, configOverrides: readForm(schemaOf(snapshot, kind, id), activation.configOverrides) };
}

/** `secret.clear` for each secret an activation's overrides held, when it is removed. */
function clearedSecrets(who: Actor, snapshot: Snapshot, kind: Kind, id: string, collectorId: string, overrides: Overrides): AuditEntry[] {
  const schema = schemaOf(snapshot, kind, id);
  return schema
    ? secretAudit(who, schema, overrides, undefined, { type: "collector", id: collectorId, root: "configOverrides", details: { [`${kind}Id`]: id } })
    : [];
}

function activationsOf(snapshot: Snapshot, collectorId: string): CollectorActivations {
  return snapshot.activations.get(collectorId) ?? { collectorId, sources: [], destinations: [] };
}
