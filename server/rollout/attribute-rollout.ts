/**
 * Changing who runs what is a deployment (issue 33 part 3). An operator's
 * edit of a collector record (tags, environment, name, mode; a new record)
 * changes what a render reads of it, so before it is written each edited
 * collector is rendered as the edit would leave it, at the commit it is on
 * (retarget.ts `currentCommit`), and compared with its target: the same
 * plan a publish answers (publish-plan.ts). An edit that changes no
 * collector's config is written as it is. One that does (or that puts a
 * collector into a config it cannot render yet, which it would get once it
 * reports what the config needs) needs
 * `config:publish` (refused 403 otherwise, audited as auth.denied), is
 * refused while a staged rollout is running or paused, and lands in the
 * same writes as the edit as a rollout of kind "attributes": all at once,
 * or batch by batch with a publish's strategy (staged.ts releases the
 * later batches, each collector at the commit it was rendered at). A
 * collector whose config cannot be rendered keeps the one it runs and is
 * listed as skipped with the reason, as a fleet publish does.
 */
import { auditEntry, type Actor } from "../audit/audit.ts";
import type { Collector } from "../../shared/collectors.ts";
import type { PublishPlan, Rollout } from "../../shared/rollouts.ts";
import type { CollectorEdit } from "../collectors/collectors.ts";
import { AppError, ConflictError, ForbiddenError } from "../errors.ts";
import type { AuditEntry, Doc, Store, WriteOp } from "../store/store.ts";
import { mergeRenders, renderFleet, skippedOf, type FleetRender } from "./fleet-render.ts";
import { publishPlan } from "./publish-plan.ts";
import {
  ACTIVE,
  activeStagedRollout,
  CONFIGS,
  LATEST,
  latestFleetPublish,
  PENDING,
  RENDER_FAILURES,
  ROLLOUTS,
  targetWrites,
  type CollectorConfig,
  type PendingTarget,
  type RenderFailure,
} from "./records.ts";
import { unstoredWrites } from "./stored-rendered.ts";
import type { RenderedConfig } from "./renderer.ts";
import { collectorsScope, currentCommit, reaches, type AtCommit, type Retargeting } from "./retarget.ts";
import { cutBatches, stagedFields, type Strategy } from "./strategy.ts";

/** How an approved attribute change rolls out: a publish's strategy options. */
export interface AttributeRolloutOptions {
  strategy?: Strategy;
  /** Collectors of the canary batch, as the edit leaves them. */
  canary?: (collector: Collector) => boolean;
}

/** What the edit's writes carry besides the records: the new targets, the rollout, its audit entry. */
export interface AttributeDeployment {
  ops: WriteOp[];
  audit: AuditEntry[];
  /** The edited collectors this deployment handled (rendered and, where it changed, re-targeted): none is left to retarget.ts. */
  handled: string[];
  /** The rollout recorded, when some config changed or a collector was skipped. */
  rollout: Rollout | null;
}

/** The edited collectors rendered as the edit leaves them, with what the plan and the write both need. */
interface EditRender {
  /** The commit most of them are on (the fleet's): the rollout's and the plan's. */
  commit: string | null;
  fleet: FleetRender;
  /** Each rendered or failed collector's commit. */
  commitOf: Map<string, string>;
  targets: Map<string, Doc<CollectorConfig>>;
}

export class AttributeRollouts {
  constructor(
    private readonly store: Store,
    private readonly retargeting: Pick<Retargeting, "at">,
    private readonly rendered: (hash: string) => Promise<RenderedConfig | null>,
  ) {}

  /**
   * What the edits would change, writing nothing: the plan a publish answers,
   * at the commit the edited collectors are on; null when none is on any
   * commit (nothing was published to them, so the edit changes no config).
   */
  async plan(edits: readonly CollectorEdit[]): Promise<PublishPlan | null> {
    const render = await this.render(edits);
    if (render.commit === null) return null;
    return publishPlan({ commit: render.commit, fleet: render.fleet, targets: toPlanned(render.targets), rendered: this.rendered });
  }

  /**
   * The writes that deploy the edits, to land with them. Throws 403 when a
   * config would change and `mayPublish` is false, 409 while a staged rollout
   * is running or paused.
   */
  async deployment(who: Actor, edits: readonly CollectorEdit[], mayPublish: boolean, options: AttributeRolloutOptions = {}): Promise<AttributeDeployment> {
    const handled = edits.map((e) => e.after.id);
    const render = await this.render(edits);
    const { fleet, targets, commitOf } = render;
    const changing = fleet.rendered.filter(({ collector, config }) => targets.get(collector.id)?.data.targetHash !== config.hash);
    const deploying = [...changing.map((c) => c.collector), ...(await this.newFailures(render, edits))];
    if (deploying.length > 0) await this.mayDeploy(who, deploying, mayPublish);
    const failures = await this.store.getMany<RenderFailure>(RENDER_FAILURES, handled);
    const ops: WriteOp[] = [];
    // A collector rendered: what an earlier render could not do is moot.
    for (const { collector } of fleet.rendered) {
      const known = failures.get(collector.id);
      if (known) ops.push({ op: "delete", collection: RENDER_FAILURES, id: collector.id, expect: known.version });
    }
    const skipped = skippedOf(fleet);
    if (render.commit === null || changing.length + skipped.length === 0) return { ops, audit: [], handled, rollout: null };

    const commit = render.commit;
    const now = new Date().toISOString();
    const id = Bun.randomUUIDv7();
    const { strategy } = options;
    const canary = options.canary ? new Set(changing.filter(({ collector }) => options.canary!(collector)).map(({ collector }) => collector.id)) : undefined;
    const ids = changing.map(({ collector }) => collector.id);
    const batches = strategy ? cutBatches(ids, strategy, canary) : [ids];
    const hashOf = new Map(changing.map(({ collector, config }) => [collector.id, config.hash]));
    const byHash = new Map(changing.map(({ config }) => [config.hash, config]));
    ops.push(...(await unstoredWrites(this.store, [...byHash.values()])));
    for (const [index, batch] of batches.entries()) {
      for (const collectorId of batch) {
        const target = targets.get(collectorId);
        const hash = hashOf.get(collectorId)!;
        const at = commitOf.get(collectorId)!;
        if (index === 0) {
          const entry = {
            seq: (target?.data.targetSeq ?? 0) + 1,
            commit: at,
            hash,
            time: now,
            state: "outdated" as const,
            actor: who.actor,
            cause: "attributes" as const,
            rolloutId: id,
          };
          ops.push(...targetWrites(collectorId, entry, target?.version ?? "absent"));
        } else {
          const data: PendingTarget = { hash, ...(at !== commit ? { commit: at } : {}) };
          ops.push({ op: "put", collection: PENDING, id: `${id}/${collectorId}`, data, expect: "absent" });
        }
      }
    }
    for (const { collectorId, message } of skipped) {
      const failure: RenderFailure = { collectorId, commit: commitOf.get(collectorId)!, error: message, at: now, rolloutId: id };
      ops.push({ op: "put", collection: RENDER_FAILURES, id: collectorId, data: failure });
    }
    const changed = batches.flat();
    const involved = [...fleet.rendered.map((r) => r.collector.id), ...skipped.map((s) => s.collectorId)].sort();
    const pinned = fleet.pinned.map((c) => c.id);
    const rollout: Rollout = {
      id,
      kind: "attributes",
      commit,
      actor: who.actor,
      startedAt: now,
      scope: collectorsScope(involved),
      collectorIds: involved,
      changed,
      ...(skipped.length > 0 ? { skipped } : {}),
      ...(pinned.length > 0 ? { pinned } : {}),
      ...stagedFields(strategy, batches),
    };
    if (rollout.phase) ops.push({ op: "put", collection: ACTIVE.collection, id: ACTIVE.id, data: { rolloutId: id } });
    ops.push(
      { op: "put", collection: ROLLOUTS, id, data: rollout, expect: "absent" },
      { op: "put", collection: LATEST.collection, id: LATEST.id, data: { rolloutId: id } },
    );
    const audit = [
      auditEntry(who, "config.attributes", "rollout", id, {
        commit,
        collectors: involved.length,
        changed: changed.length,
        ...(skipped.length > 0 ? { skipped: skipped.length } : {}),
        ...(pinned.length > 0 ? { pinned: pinned.length } : {}),
        ...(rollout.strategy ? { strategy: rollout.strategy, batches: batches.length } : {}),
      }),
    ];
    return { ops, audit, handled, rollout };
  }

  /**
   * Edited collectors whose config cannot be rendered where the record as it
   * was could be (or was in no config at all): they keep what they run for
   * now, but the edit has put them in a config they will get as soon as they
   * report what it needs, so it is a deployment as much as a change is. One
   * that failed before the edit too is not the edit's doing.
   */
  private async newFailures(render: EditRender, edits: readonly CollectorEdit[]): Promise<Collector[]> {
    const before = new Map(edits.map((e) => [e.after.id, e.before]));
    const out: Collector[] = [];
    for (const { collector } of render.fleet.failed) {
      const was = before.get(collector.id);
      const at = await this.retargeting.at(render.commitOf.get(collector.id)!);
      if (was && (render.targets.has(was.id) || reaches(at, was)) && !renders(at, was)) continue;
      out.push(collector);
    }
    return out;
  }

  /** A change of what collectors run needs config:publish and no staged rollout in progress. */
  private async mayDeploy(who: Actor, changing: Collector[], mayPublish: boolean): Promise<void> {
    const names =
      changing
        .slice(0, 3)
        .map((c) => c.name)
        .join(", ") + (changing.length > 3 ? ", …" : "");
    if (!mayPublish) {
      const what = `an edit that changes what ${changing.length} collector(s) run`;
      await this.store.write(
        [],
        [
          auditEntry(
            who,
            "auth.denied",
            "collector",
            null,
            { scope: "config:publish", reason: what, collectorIds: changing.slice(0, 100).map((c) => c.id) },
            "denied",
          ),
        ],
      );
      throw new ForbiddenError(
        "config:publish",
        `This edit changes what ${changing.length} collector(s) run (${names}), which is a deployment: it needs the scope 'config:publish', which the credential does not have. Ask for its plan first to see the change.`,
      );
    }
    const active = await activeStagedRollout(this.store);
    if (active) {
      throw new ConflictError(
        `This edit changes what ${changing.length} collector(s) run (${names}), and rollout ${active.data.id} is ${active.data.phase} with batches left to release; resume or abort it first.`,
        "rollout_in_progress",
      );
    }
  }

  /**
   * Each edited collector as the edit leaves it, rendered at the commit it is
   * on; one never published to (no commit), or without a target that its
   * commit's config does not reach, is left out: the edit gives it no config.
   */
  private async render(edits: readonly CollectorEdit[]): Promise<EditRender> {
    const fleetPublish = await latestFleetPublish(this.store);
    const targets = await this.store.getMany<CollectorConfig>(
      CONFIGS,
      edits.filter((e) => e.before !== null).map((e) => e.after.id),
    );
    const byCommit = new Map<string, Collector[]>();
    const commitOf = new Map<string, string>();
    for (const { after } of edits) {
      const target = targets.get(after.id)?.data;
      const commit = currentCommit(target, fleetPublish);
      if (commit === null) continue;
      if (!target && !reaches(await this.retargeting.at(commit), after)) continue;
      commitOf.set(after.id, commit);
      byCommit.set(commit, [...(byCommit.get(commit) ?? []), after]);
    }
    const renders: FleetRender[] = [];
    for (const [commit, collectors] of byCommit) {
      const at = await this.retargeting.at(commit);
      collectors.sort((a, b) => (a.id < b.id ? -1 : 1));
      renders.push(await renderFleet(at.render, collectors, (id) => targets.get(id)?.data.pinned !== undefined, new Set()));
    }
    const commit = fleetPublish && byCommit.has(fleetPublish.commit) ? fleetPublish.commit : (byCommit.keys().next().value ?? null);
    return { commit, fleet: mergeRenders(renders), commitOf, targets };
  }
}

/** Whether the commit's config renders for the collector. */
function renders(at: AtCommit, collector: Collector): boolean {
  try {
    at.render(collector);
    return true;
  } catch (error) {
    if (error instanceof AppError) return false;
    throw error;
  }
}

function toPlanned(targets: ReadonlyMap<string, Doc<CollectorConfig>>): Map<string, CollectorConfig> {
  return new Map([...targets].map(([id, doc]) => [id, doc.data]));
}
