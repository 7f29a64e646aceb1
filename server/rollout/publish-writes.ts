/**
 * A publish's writes, stored so that a reader never sees a change without its
 * record (docs/architecture.md "The configuration lifecycle", step 3). A
 * publish that fits in one write is one write. A fleet's worth is cut into
 * slices of `slice` store operations with a turn of the event loop between
 * them (an embedded store writes synchronously, and 200,000 rows in one
 * transaction held every other request for seconds); then:
 *
 * - the first slice stores the rollout record (naming every collector it is
 *   to change, in write order) and the pointers to it, with a marker
 *   `rollout_writes/<id>` and, on a shared store, the lease its writer renews;
 * - each slice moves the marker on, in the same write, by the collectors whose
 *   target it stored, guarded by the marker's version;
 * - the last slice stores what holds only once every target is stored (the
 *   fleet's commit, render failures, the active staged rollout) and the
 *   audit entry, and deletes the marker and the lease.
 *
 * So at any crash point either nothing of the publish is visible (rendered
 * configs no target names aside), or its record names every target written,
 * and the marker says exactly which: the first `written` of `changed`. A
 * marker whose writer is gone (`recover`: on every start, every
 * RECOVER_EVERY_MS and before every publish; on a shared store once the
 * writer's lease expired) is recorded as interrupted: the rollout keeps what
 * it wrote (`interruptedRollout`), its `config.publish` audit entry is written
 * with those counts and outcome failure, and the marker goes, in one write
 * guarded by the marker's version, so a slice that still lands after all
 * makes the recovery read again rather than miscount.
 */
import type { Logger } from "pino";
import { auditEntry, type Actor } from "../audit/audit.ts";
import { ConflictError } from "../errors.ts";
import { nextTurn } from "../lib/next-turn.ts";
import { leaseFor, type Lease } from "../store/lease.ts";
import type { Store, WriteOp } from "../store/store.ts";
import { PENDING, ROLLOUTS, WRITES, type Rollout, type RolloutWrite } from "./records.ts";

/**
 * Store operations per write when a publish's writes are sliced. At 5,000 a slice of a
 * 100,000-collector publish held the event loop for 200-300 ms (bench/fleet.ts --cpu-prof),
 * and every query waited behind each one.
 */
export const WRITE_SLICE = 1000;
/** How long a writer's lease lasts unrenewed (it renews three times as often): another replica takes its publish for interrupted after that. */
const LEASE_TTL_MS = 10_000;
/** How often every replica looks for interrupted publishes. */
const RECOVER_EVERY_MS = LEASE_TTL_MS / 2;
/** Reads and tries again this often when a late slice lands while an interruption is being recorded. */
const RECORD_ATTEMPTS = 5;

/** What one publish stores, in the order it is stored. */
export interface PublishWrite {
  rollout: Rollout;
  who: Actor;
  /** Its `config.publish` audit entry's details. */
  details: Record<string, unknown>;
  /** Rendered configs, stored before any target names them. */
  rendered: WriteOp[];
  /** Stored with the rollout record: the pointers to it, the interrupted publishes it resumes. */
  first: WriteOp[];
  /** How many of `rollout.changed`, from the first, need no writes (resumed: their targets are stored already). */
  resumed: number;
  /** Per collector of `rollout.changed` after those, in order: its target and history, or its queued target. */
  perCollector: WriteOp[][];
  /** Stored with the last slice: what holds only once every target is (the fleet's commit, render failures, the active staged rollout). */
  last: WriteOp[];
}

interface Slice {
  ops: WriteOp[];
  /** Collectors whose writes this slice completes. */
  collectors: number;
}

/** The lease a publish's writer holds while it writes: another replica's recovery waits for it to expire. */
const leaseName = (rolloutId: string) => `publish/${rolloutId}`;

/**
 * The rollout as its interrupted writes left it, `written` of its `changed`
 * stored: it names those and the collectors it covers apart from the others.
 * A staged one keeps the targets of its first batch that were stored, done
 * (its queued targets are deleted by the caller: none is released).
 */
export function interruptedRollout(rollout: Rollout, written: number, at: string): Rollout {
  const targets = rollout.changed.slice(0, Math.min(written, rollout.batchEnds?.[0] ?? rollout.changed.length));
  const dropped = new Set(rollout.changed.slice(targets.length));
  return {
    ...rollout,
    collectorIds: rollout.collectorIds.filter((id) => !dropped.has(id)),
    changed: targets,
    ...(rollout.batchEnds ? { batchEnds: [targets.length], released: 0, phase: "done" as const, settledAt: null } : {}),
    interrupted: { at, planned: rollout.changed.length, written: targets.length },
  };
}

export class PublishWrites {
  /** Rollouts this process is writing: never taken for interrupted here. */
  private readonly writing = new Set<string>();
  private timer: ReturnType<typeof setInterval> | undefined;
  private recovering: Promise<void> | null = null;

  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    private readonly slice = WRITE_SLICE,
  ) {}

  start(): void {
    this.timer = setInterval(
      () => void this.recover().catch((err) => this.log.warn({ err }, "rollout: looking for interrupted publishes failed")),
      RECOVER_EVERY_MS,
    );
    void this.recover().catch((err) => this.log.warn({ err }, "rollout: looking for interrupted publishes failed; the next look tries again"));
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.recovering?.catch(() => {});
  }

  /** Stores the publish: one write when it fits, else slices as above. */
  async write(publish: PublishWrite): Promise<void> {
    const { rollout } = publish;
    const audit = auditEntry(publish.who, "config.publish", "rollout", rollout.id, publish.details);
    const slices = this.cut(publish);
    if (slices.length === 1) {
      await this.store.write([...publish.first, ...slices[0]!.ops, ...publish.last], [audit]);
      return;
    }
    const lease = leaseFor(this.store, leaseName(rollout.id), { ttlMs: LEASE_TTL_MS });
    const renew = setInterval(
      () => void lease.renew().catch((err) => this.log.warn({ err, rolloutId: rollout.id }, "rollout: renewing a publish's lease failed")),
      LEASE_TTL_MS / 3,
    );
    this.writing.add(rollout.id);
    /** The marker's version once the first slice stored it. */
    let version: number | undefined;
    let written = publish.resumed;
    try {
      for (const [i, slice] of slices.slice(0, -1).entries()) {
        if (i > 0) await nextTurn();
        written += slice.collectors;
        const marker: RolloutWrite = { rolloutId: rollout.id, written, who: publish.who, details: publish.details };
        const head = i === 0 ? [...publish.first, ...lease.takeOps()] : [];
        const docs = await this.store.write([
          ...head,
          ...slice.ops,
          { op: "put", collection: WRITES, id: rollout.id, data: marker, expect: version ?? "absent" },
        ]);
        version = docs[docs.length - 1]!.version;
      }
      await nextTurn();
      const end: WriteOp = { op: "delete", collection: WRITES, id: rollout.id, expect: version! };
      await this.store.write([...slices[slices.length - 1]!.ops, ...publish.last, ...lease.releaseOps(), end], [audit]);
    } catch (error) {
      this.writing.delete(rollout.id);
      // Part of it is stored: record it as interrupted now; when that fails too, recovery does it once the lease has expired.
      if (version !== undefined) {
        await this.recordInterrupted(rollout.id, lease).catch((err) =>
          this.log.warn({ err, rolloutId: rollout.id }, "rollout: recording an interrupted publish failed; recovery tries again"),
        );
      }
      throw error;
    } finally {
      clearInterval(renew);
      this.writing.delete(rollout.id);
    }
  }

  /**
   * Records every publish whose writes stopped part way as interrupted: those
   * this process is not writing, whose lease (on a shared store) has expired.
   * One look at a time; a caller during one waits for it.
   */
  recover(): Promise<void> {
    return (this.recovering ??= this.recoverAll().finally(() => (this.recovering = null)));
  }

  private async recoverAll(): Promise<void> {
    for (const { id } of await this.store.list<RolloutWrite>(WRITES)) {
      if (this.writing.has(id)) continue;
      const lease = leaseFor(this.store, leaseName(id), { ttlMs: LEASE_TTL_MS });
      if (!(await lease.acquire())) continue;
      try {
        await this.recordInterrupted(id, lease);
      } finally {
        await lease.release();
      }
    }
  }

  /** Records the rollout as its writes left it, with its audit entry, and removes the marker and the lease. */
  private async recordInterrupted(id: string, lease: Lease): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const [marker, doc] = await Promise.all([this.store.get<RolloutWrite>(WRITES, id), this.store.get<Rollout>(ROLLOUTS, id)]);
      if (!marker) return;
      const now = new Date();
      const ops: WriteOp[] = [{ op: "delete", collection: WRITES, id, expect: marker.version }, ...lease.releaseOps()];
      if (!doc) {
        // The record and the marker are stored together: a marker alone is left from a store copied mid-way; nothing names it.
        await this.store.write(ops);
        return;
      }
      const planned = doc.data;
      const rollout = interruptedRollout(planned, marker.data.written, now.toISOString());
      // A staged publish's queued targets that were stored are never released.
      const firstBatch = rollout.changed.length;
      for (const collectorId of planned.changed.slice(firstBatch, planned.batchEnds ? marker.data.written : firstBatch)) {
        ops.push({ op: "delete", collection: PENDING, id: `${id}/${collectorId}` });
      }
      ops.push({ op: "put", collection: ROLLOUTS, id, data: rollout, expect: doc.version });
      const details = {
        ...marker.data.details,
        collectors: rollout.collectorIds.length,
        changed: rollout.changed.length,
        interrupted: rollout.interrupted,
        startedAt: planned.startedAt,
      };
      try {
        await this.store.write(ops, [auditEntry(marker.data.who, "config.publish", "rollout", id, details, "failure", now)]);
        this.log.warn(
          { rolloutId: id, ...rollout.interrupted },
          "rollout: a publish was interrupted part way; recorded with what it wrote (publish again to deliver the rest)",
        );
        return;
      } catch (error) {
        // A slice landed meanwhile (its writer was slow, not gone): read again.
        if (!(error instanceof ConflictError) || attempt >= RECORD_ATTEMPTS) throw error;
      }
    }
  }

  /** Slices of about `slice` operations: rendered configs first, then each collector's writes together (never split). */
  private cut(publish: PublishWrite): Slice[] {
    const slices: Slice[] = [];
    let current: Slice = { ops: [], collectors: 0 };
    const add = (group: WriteOp[], collector: boolean) => {
      if (current.ops.length > 0 && current.ops.length + group.length > this.slice) {
        slices.push(current);
        current = { ops: [], collectors: 0 };
      }
      current.ops.push(...group);
      if (collector) current.collectors++;
    };
    for (const op of publish.rendered) add([op], false);
    for (const group of publish.perCollector) add(group, true);
    slices.push(current);
    return slices;
  }
}
