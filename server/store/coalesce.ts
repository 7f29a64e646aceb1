/**
 * Coalesces many small read-modify-write updates of one collection into one
 * store write per tick. Collector channels report heartbeats and config
 * status thousands of times a second at fleet scale; one fsync'd write each
 * would cap the fleet far below its size. Updates are functions of the
 * stored document, applied to a fresh read under compare-and-swap, so they
 * never clobber a concurrent API edit. A batch that fails is written again
 * one document at a time, so one failing document fails only its own callers.
 *
 * A coalescer given `known` (an in-memory view kept by the change feed) takes
 * each document and its version from there instead of reading it: a fleet's
 * heartbeats then cost one write per tick, not a read and a write. A view
 * that lags (another replica wrote since) fails the compare-and-swap, and
 * that batch is read from the store when it is tried again.
 */
import type { Logger } from "pino";
import { ConflictError } from "../errors.ts";
import type { Store, WriteOp } from "./store.ts";

/** Next version of a document from the current one (null when absent); null leaves it untouched. */
export type Update<T> = (current: T | null) => T | null;

/** A document's current version and data as an in-memory view holds it, or undefined when it does not. */
export type Known<T> = (id: string) => { version: number; data: T } | undefined;

interface Pending<T> {
  updates: Update<T>[];
  done: { resolve: () => void; reject: (error: unknown) => void }[];
}

const MAX_ATTEMPTS = 5;

export class Coalescer<T> {
  private pending = new Map<string, Pending<T>>();
  /** Updates not settled yet (queued or being written), per document. */
  private readonly unsettled = new Map<string, number>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly collection: string,
    private readonly delayMs: number,
    private readonly log: Logger,
    private readonly known?: Known<T>,
  ) {}

  /** Queues an update; resolves once it is stored. */
  update(id: string, update: Update<T>): Promise<void> {
    this.unsettled.set(id, (this.unsettled.get(id) ?? 0) + 1);
    const settle = () => {
      const left = this.unsettled.get(id)! - 1;
      if (left === 0) this.unsettled.delete(id);
      else this.unsettled.set(id, left);
    };
    return new Promise((resolve, reject) => {
      let entry = this.pending.get(id);
      if (!entry) this.pending.set(id, (entry = { updates: [], done: [] }));
      entry.updates.push(update);
      entry.done.push({
        resolve: () => {
          settle();
          resolve();
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      });
      this.timer ??= setTimeout(() => void this.flush(), this.delayMs);
    });
  }

  /** Whether an update of `id` is queued or being written: until it settles, what a view holds of it may be older. */
  queued(id: string): boolean {
    return this.unsettled.has(id);
  }

  /** Writes everything queued so far. */
  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.pending;
    this.pending = new Map();
    this.flushing = this.flushing.then(() => this.write(batch));
    return this.flushing;
  }

  private async write(batch: Map<string, Pending<T>>): Promise<void> {
    if (batch.size === 0) return;
    for (let attempt = 1; ; attempt++) {
      try {
        const ops: WriteOp[] = [];
        const docs = await this.read([...batch.keys()], attempt === 1);
        for (const [id, entry] of batch) {
          const doc = docs.get(id) ?? null;
          let next: T | null = doc?.data ?? null;
          for (const update of entry.updates) next = update(next) ?? next;
          if (next !== null && next !== (doc?.data ?? null)) {
            ops.push({ op: "put", collection: this.collection, id, data: next, expect: doc?.version ?? "absent" });
          }
        }
        if (ops.length > 0) await this.store.write(ops);
        for (const entry of batch.values()) for (const d of entry.done) d.resolve();
        return;
      } catch (error) {
        if (error instanceof ConflictError && attempt < MAX_ATTEMPTS) continue;
        if (batch.size > 1) {
          // One bad document (an update that throws, data the store refuses) must not cost the others theirs:
          // each is written alone, and only the ones that fail alone are refused.
          for (const [id, entry] of batch) await this.write(new Map([[id, entry]]));
          return;
        }
        this.log.warn({ err: error, collection: this.collection, id: [...batch.keys()][0] }, "coalesced write failed");
        for (const entry of batch.values()) for (const d of entry.done) d.reject(error);
        return;
      }
    }
  }

  /** The batch's documents: from `known` on a first attempt where it holds them, the rest from the store. */
  private async read(ids: string[], first: boolean): Promise<Map<string, { version: number; data: T }>> {
    if (!first || this.known === undefined) return this.store.getMany<T>(this.collection, ids);
    const docs = new Map<string, { version: number; data: T }>();
    const unknown: string[] = [];
    for (const id of ids) {
      const doc = this.known(id);
      if (doc === undefined) unknown.push(id);
      else docs.set(id, doc);
    }
    if (unknown.length > 0) for (const [id, doc] of await this.store.getMany<T>(this.collection, unknown)) docs.set(id, doc);
    return docs;
  }

  close(): Promise<void> {
    return this.flush();
  }
}
