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
 * open rollout changed, looks at that rollout again, at most once a second
 * (a fleet's heartbeats change collectors many times a second). A look does
 * not read every collector of the rollout each time: the first one after
 * the rollout was written keeps which of its collectors the in-memory target
 * index counts as not settled yet (`StagedRollouts.unsettled`), and later
 * looks judge only the collectors that changed since (a collector's place
 * moves only with its target or its record); once none is left (or
 * the rollout was aborted, or its batches moved on), `recordEnd` reads the
 * targets from the store and decides. Every replica runs one; the
 * versioned write in `recordEnd` makes the end recorded once. A later
 * rollout that changes some of an open rollout's collectors takes them out
 * of its counts (their state is the later one's now); a rollout whose own
 * collectors have all settled then ends with the rest.
 *
 * State from before ends were recorded (an upgrade) holds rollouts that
 * ended long ago without a record: on the first start, every one of them but
 * the latest ones (`/publish/status` with and without scope=fleet, and a
 * staged one in progress) is marked ended with outcome `not_recorded`, which
 * sends no event, in one write with the marker that it was done.
 */
import type { Logger } from "pino";
import { COLLECTORS } from "../collectors/collectors.ts";
import { auditEntry, SYSTEM_ACTOR } from "../audit/audit.ts";
import { ConflictError } from "../errors.ts";
import type { Change, Store, WriteOp } from "../store/store.ts";
import { ACTIVE, CONFIGS, LATEST, LATEST_FLEET, ROLLOUTS, type Rollout } from "./records.ts";
import { countBatch } from "./strategy.ts";
import type { StagedRollouts } from "./staged.ts";

/** At most one look at the open rollouts per this long. */
const LOOK_MS = 1000;
/** Written once ends are recorded: rollouts without an end before it are marked not_recorded. */
export const ENDS_SINCE = { collection: "system", id: "rollout_ends_since" };

export class RolloutEnds {
  /** Rollouts not ended yet, each with the collectors it targets. */
  private readonly open = new Map<string, Set<string>>();
  /** Per open rollout as last written, its record. */
  private readonly rollouts = new Map<string, Rollout>();
  /** Per open rollout, its collectors the index counted as not settled at the last look; absent: judge them all. */
  private readonly waiting = new Map<string, Set<string>>();
  /** Per open rollout, its collectors that changed since the last look. */
  private readonly touched = new Map<string, Set<string>>();
  /** Per open rollout, its collectors a later rollout has given another config since (left out of its counts). */
  private readonly handedOn = new Map<string, Set<string>>();
  private readonly dirty = new Set<string>();
  private chain: Promise<void> = Promise.resolve();
  private unwatch: (() => void) | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private lastLook = 0;

  constructor(
    private readonly store: Store,
    private readonly staged: Pick<StagedRollouts, "recordEnd" | "unsettled">,
    private readonly logger: Logger,
  ) {}

  start(): void {
    const reload = () => this.serially(() => this.load());
    this.unwatch = this.store.watch((changes) => this.serially(() => this.changed(changes)), reload);
    reload();
  }

  async stop(): Promise<void> {
    this.unwatch?.();
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.chain;
  }

  /** Resolves once the changes seen so far are handled (tests). */
  settled(): Promise<void> {
    return this.chain;
  }

  /** One at a time and in order, off the writer's path. */
  private serially(work: () => Promise<void>): void {
    this.chain = this.chain.then(work).catch((err) => this.logger.warn({ err }, "rollout: recording a rollout's end failed; its next change tries again"));
  }

  private async load(): Promise<void> {
    if (!(await this.store.get(ENDS_SINCE.collection, ENDS_SINCE.id))) await this.markUnrecorded();
    this.open.clear();
    this.handedOn.clear();
    this.rollouts.clear();
    this.waiting.clear();
    this.touched.clear();
    for (const { data } of await this.store.list<Rollout>(ROLLOUTS)) {
      if (data.ended) continue;
      this.opened(data);
    }
    this.soon();
  }

  /** The first start over older state: rollouts that are not the latest are marked not_recorded, once (another replica may do it first). */
  private async markUnrecorded(): Promise<void> {
    const pointers = await this.store.getMany<{ rolloutId: string }>("system", [LATEST.id, LATEST_FLEET.id, ACTIVE.id]);
    const keep = new Set([...pointers.values()].map((doc) => doc.data.rolloutId));
    const at = new Date().toISOString();
    const none = countBatch([]);
    const ops: WriteOp[] = [];
    for (const { id, version, data } of await this.store.list<Rollout>(ROLLOUTS)) {
      if (data.ended || keep.has(id)) continue;
      ops.push({ op: "put", collection: ROLLOUTS, id, data: { ...data, ended: { at, outcome: "not_recorded", counts: none } }, expect: version });
    }
    ops.push({ op: "put", collection: ENDS_SINCE.collection, id: ENDS_SINCE.id, data: { at }, expect: "absent" });
    try {
      await this.store.write(
        ops,
        ops.length > 1 ? [auditEntry(SYSTEM_ACTOR, "rollout.end", "rollout", null, { outcome: "not_recorded", rollouts: ops.length - 1 })] : [],
      );
    } catch (error) {
      if (!(error instanceof ConflictError)) throw error;
    }
  }

  private async changed(changes: Change[]): Promise<void> {
    for (const change of changes) {
      if (change.collection === ROLLOUTS) {
        const rollout = change.op === "put" ? (await this.store.get<Rollout>(ROLLOUTS, change.id))?.data : undefined;
        if (!rollout || rollout.ended) {
          this.forget(change.id);
        } else {
          if (!this.open.has(rollout.id)) this.handOn(rollout);
          this.opened(rollout);
        }
      } else if (change.collection === CONFIGS || change.collection === COLLECTORS) {
        for (const [id, collectorIds] of this.open) {
          if (!collectorIds.has(change.id)) continue;
          this.dirty.add(id);
          let touched = this.touched.get(id);
          if (!touched) this.touched.set(id, (touched = new Set()));
          touched.add(change.id);
        }
      }
    }
    if (this.dirty.size > 0) this.soon();
  }

  /** A rollout written (new, released, paused, aborted): all of its collectors are judged at the next look. */
  private opened(rollout: Rollout): void {
    this.open.set(rollout.id, new Set(rollout.collectorIds));
    this.rollouts.set(rollout.id, rollout);
    this.waiting.delete(rollout.id);
    this.touched.delete(rollout.id);
    this.dirty.add(rollout.id);
  }

  /** A new rollout: the collectors it changes are no longer any older open rollout's to count. */
  private handOn(rollout: Rollout): void {
    for (const [id, collectorIds] of this.open) {
      if (id >= rollout.id) continue;
      let passed = this.handedOn.get(id);
      for (const collectorId of rollout.changed) {
        if (!collectorIds.has(collectorId)) continue;
        if (!passed) this.handedOn.set(id, (passed = new Set()));
        passed.add(collectorId);
      }
      if (passed) {
        this.dirty.add(id);
        this.waiting.delete(id);
      }
    }
  }

  private forget(id: string): void {
    this.open.delete(id);
    this.handedOn.delete(id);
    this.dirty.delete(id);
    this.rollouts.delete(id);
    this.waiting.delete(id);
    this.touched.delete(id);
  }

  /** A look at the dirty rollouts, now or a second after the last one. */
  private soon(): void {
    if (this.timer !== undefined || !this.unwatch) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.serially(() => this.look());
      },
      Math.max(0, this.lastLook + LOOK_MS - Date.now()),
    );
  }

  private async look(): Promise<void> {
    this.lastLook = Date.now();
    const ids = [...this.dirty];
    this.dirty.clear();
    for (const id of ids) {
      if (!this.open.has(id) || !(await this.mayHaveEnded(id))) continue;
      if (await this.staged.recordEnd(id, this.handedOn.get(id))) this.forget(id);
      // Not ended after all (the store knew more than the index): judge them all at the next look.
      else this.waiting.delete(id);
    }
  }

  /**
   * Whether the in-memory index counts nothing of the rollout as left: its
   * collectors that changed since the last look are judged again (all of
   * them after the rollout was written), the others stay as judged. An aborted
   * rollout or one with batches to release is for `recordEnd` to judge.
   */
  private async mayHaveEnded(id: string): Promise<boolean> {
    const rollout = this.rollouts.get(id)!;
    if (rollout.phase === "aborted" || (rollout.batchEnds !== undefined && rollout.phase !== "done")) return true;
    const handedOn = this.handedOn.get(id) ?? new Set<string>();
    const before = this.waiting.get(id);
    const touched = this.touched.get(id) ?? new Set<string>();
    this.touched.delete(id);
    let waiting: Set<string>;
    if (before === undefined) {
      waiting = await this.staged.unsettled(rollout, handedOn);
    } else {
      // A collector's place in the rollout moves only with its target or its record: the others stay as judged,
      // and the set is changed in place (copying 100,000 waiting ids each second was most of a look).
      const judged = await this.staged.unsettled(rollout, handedOn, [...touched]);
      for (const collectorId of touched) {
        if (judged.has(collectorId)) before.add(collectorId);
        else before.delete(collectorId);
      }
      waiting = before;
    }
    // Another change of the rollout may have come in while judging: it is judged at the next look.
    if (this.rollouts.get(id) !== rollout) return false;
    this.waiting.set(id, waiting);
    return waiting.size === 0;
  }
}
