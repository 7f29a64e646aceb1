/**
 * Cluster-wide leases, so a periodic job (audit retention, the offline sweep)
 * runs on one replica rather than on each. A lease is one document in the
 * `leases` collection naming its holder; compare-and-swap on its version
 * makes every change to it (take, renew, take over, release) succeed for at
 * most one replica, so it has at most one holder at a time. Built on the
 * Store contract alone, it works on every adapter.
 *
 * Time: the holder stores the instant it last took or renewed the lease, by
 * its own clock, and the TTL it promises to renew within. Replicas' clocks
 * differ a little, so another replica treats the lease as expired only once
 * its own clock passes renewedAt + ttl + CLOCK_SKEW_MARGIN_MS: a holder whose
 * clock is up to that margin behind is never overtaken while it still renews
 * on time. A skew beyond the margin (or a holder paused longer than its TTL)
 * can let two replicas run one tick of a job; the jobs are idempotent
 * (pruning by time, status flips under compare-and-swap), so the cost is a
 * repeated run, never wrong data.
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import { ConflictError } from "../errors.ts";
import type { Store, WriteOp } from "./store.ts";

export const LEASES = "leases";

/** How far apart replicas' clocks may be (NTP keeps them within milliseconds). */
export const CLOCK_SKEW_MARGIN_MS = 2_000;

export interface LeaseRecord {
  holder: string;
  /** When the holder last took or renewed the lease, by the holder's clock. */
  renewedAt: string;
  ttlMs: number;
}

/** A named lease one replica holds at a time. */
export interface Lease {
  readonly name: string;
  /** Takes the lease when free or expired, renews it when already held; true while this replica holds it. */
  acquire(): Promise<boolean>;
  /** Extends the lease this replica holds; false when another replica holds it (or nobody does). */
  renew(): Promise<boolean>;
  /** Gives the lease up at once, so another replica need not wait for it to expire. */
  release(): Promise<void>;
  /**
   * The writes that take the lease, free, within a caller's own write (it
   * fails with a conflict when the lease is held), so the lease and what it
   * guards are stored together; none on the embedded store.
   */
  takeOps(): WriteOp[];
  /** The write that gives the lease up within a caller's own write, whoever holds it; none on the embedded store. */
  releaseOps(): WriteOp[];
}

export interface LeaseOptions {
  ttlMs: number;
  /** Who holds it; by default a new id per lease object (host, pid and a random part, readable in the store). */
  holder?: string;
  now?: () => number;
}

/** A lease kept in a document of the store. */
export class StoreLease implements Lease {
  readonly holder: string;
  private readonly now: () => number;

  constructor(
    private readonly store: Store,
    readonly name: string,
    private readonly options: LeaseOptions,
  ) {
    this.holder = options.holder ?? `${hostname()}/${process.pid}/${randomUUID().slice(0, 8)}`;
    this.now = options.now ?? Date.now;
  }

  async acquire(): Promise<boolean> {
    const doc = await this.store.get<LeaseRecord>(LEASES, this.name);
    if (doc && doc.data.holder !== this.holder && !this.expired(doc.data)) return false;
    return this.put(doc?.version ?? "absent");
  }

  async renew(): Promise<boolean> {
    const doc = await this.store.get<LeaseRecord>(LEASES, this.name);
    if (!doc || doc.data.holder !== this.holder) return false;
    return this.put(doc.version);
  }

  async release(): Promise<void> {
    const doc = await this.store.get<LeaseRecord>(LEASES, this.name);
    if (!doc || doc.data.holder !== this.holder) return;
    await this.store.write([{ op: "delete", collection: LEASES, id: this.name, expect: doc.version }]).catch(ignoreConflict);
  }

  takeOps(): WriteOp[] {
    return [{ op: "put", collection: LEASES, id: this.name, data: this.record(), expect: "absent" }];
  }

  releaseOps(): WriteOp[] {
    return [{ op: "delete", collection: LEASES, id: this.name }];
  }

  private record(): LeaseRecord {
    return { holder: this.holder, renewedAt: new Date(this.now()).toISOString(), ttlMs: this.options.ttlMs };
  }

  private expired(record: LeaseRecord): boolean {
    return this.now() > Date.parse(record.renewedAt) + record.ttlMs + CLOCK_SKEW_MARGIN_MS;
  }

  /** Writes this replica as holder if the document is still at `expect`; false when another write won. */
  private async put(expect: number | "absent"): Promise<boolean> {
    try {
      await this.store.write([{ op: "put", collection: LEASES, id: this.name, data: this.record(), expect }]);
      return true;
    } catch (error) {
      ignoreConflict(error);
      return false;
    }
  }
}

function ignoreConflict(error: unknown): void {
  if (!(error instanceof ConflictError)) throw error;
}

/** The lease of a single-instance (embedded) store: nobody else could hold it. */
class SoleLease implements Lease {
  constructor(readonly name: string) {}
  acquire = async () => true;
  renew = async () => true;
  release = async () => {};
  takeOps = () => [];
  releaseOps = () => [];
}

/**
 * The lease for `name` on this store: trivially held on the embedded store,
 * which serves one instance, so a crashed instance's leftover lease never
 * delays its own restart; a stored lease on a store replicas share.
 */
export function leaseFor(store: Store, name: string, options: LeaseOptions): Lease {
  return store.backend === "embedded" ? new SoleLease(name) : new StoreLease(store, name, options);
}
