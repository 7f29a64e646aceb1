/**
 * Ends every rollout (all at once, staged, attribute change, rollback) when
 * it has ended, so `rollout.completed` and `rollout.failed` hold for all of
 * them (webhooks/events.ts reads `ended` off the rollout). An all-at-once
 * rollout ends when none of its collectors is applying or outdated: each
 * applied or failed its config, or is offline or reporting only (counted
 * apart, as its status counts them). A staged one ends after its last batch
 * did so, or when aborted (staged.ts `recordEnd` decides from `status`).
 *
 * Reads the change feed: a rollout written, or a target or collector of an
 * open rollout changed, looks at that rollout again. Every replica runs one;
 * the versioned write in `recordEnd` makes the end recorded once.
 */
import type { Logger } from "pino";
import { COLLECTORS } from "../collectors/collectors.ts";
import type { Change, Store } from "../store/store.ts";
import { CONFIGS, ROLLOUTS, type Rollout } from "./records.ts";
import type { StagedRollouts } from "./staged.ts";

export class RolloutEnds {
  /** Rollouts not ended yet, each with the collectors it targets. */
  private readonly open = new Map<string, Set<string>>();
  private readonly dirty = new Set<string>();
  private chain: Promise<void> = Promise.resolve();
  private unwatch: (() => void) | undefined;

  constructor(
    private readonly store: Store,
    private readonly staged: Pick<StagedRollouts, "recordEnd">,
    private readonly logger: Logger,
  ) {}

  start(): void {
    const reload = () => this.then(() => this.load());
    this.unwatch = this.store.watch((changes) => this.then(() => this.changed(changes)), reload);
    reload();
  }

  async stop(): Promise<void> {
    this.unwatch?.();
    await this.chain;
  }

  /** Resolves once the changes seen so far are handled (tests). */
  settled(): Promise<void> {
    return this.chain;
  }

  /** One at a time and in order, off the writer's path. */
  private then(work: () => Promise<void>): void {
    this.chain = this.chain.then(work).catch((err) => this.logger.warn({ err }, "rollout: recording a rollout's end failed; its next change tries again"));
  }

  private async load(): Promise<void> {
    this.open.clear();
    for (const { data } of await this.store.list<Rollout>(ROLLOUTS)) {
      if (data.ended) continue;
      this.open.set(data.id, new Set(data.collectorIds));
      this.dirty.add(data.id);
    }
    await this.look();
  }

  private async changed(changes: Change[]): Promise<void> {
    for (const change of changes) {
      if (change.collection === ROLLOUTS) {
        const rollout = change.op === "put" ? (await this.store.get<Rollout>(ROLLOUTS, change.id))?.data : undefined;
        if (!rollout || rollout.ended) {
          this.open.delete(change.id);
          this.dirty.delete(change.id);
        } else {
          this.open.set(rollout.id, new Set(rollout.collectorIds));
          this.dirty.add(rollout.id);
        }
      } else if (change.collection === CONFIGS || change.collection === COLLECTORS) {
        for (const [id, collectorIds] of this.open) if (collectorIds.has(change.id)) this.dirty.add(id);
      }
    }
    await this.look();
  }

  private async look(): Promise<void> {
    const ids = [...this.dirty];
    this.dirty.clear();
    for (const id of ids) if (this.open.has(id) && (await this.staged.recordEnd(id))) this.open.delete(id);
  }
}
