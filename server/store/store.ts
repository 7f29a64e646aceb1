/**
 * The Store contract every adapter (embedded SQLite, PostgreSQL, MongoDB) keeps,
 * proven by the shared suite in contract.ts. Deliberately small: versioned JSON
 * documents by collection and id, atomic multi-document writes with
 * compare-and-swap, an append-only audit log, and a change feed.
 */

export interface Doc<T = unknown> {
  collection: string;
  id: string;
  /** Starts at 1 and grows by one on every put; the compare-and-swap handle. */
  version: number;
  data: T;
  updatedAt: string;
}

/**
 * One write of an atomic batch. `expect` guards it: a version number (the
 * document must be at exactly that version), "absent" (must not exist) or
 * "present" (must exist). Without it the write is unconditional.
 */
export type WriteOp =
  | { op: "put"; collection: string; id: string; data: unknown; expect?: number | "absent" | "present" }
  | { op: "delete"; collection: string; id: string; expect?: number | "present" };

export type AuditOutcome = "success" | "failure" | "denied";

export interface AuditEntry {
  /** Time-ordered (UUIDv7), so id order is time order and serves as the cursor. */
  id: string;
  time: string;
  actor: string;
  action: string;
  resource: string;
  resourceId: string | null;
  outcome: AuditOutcome;
  details: Record<string, unknown>;
  remoteAddr: string | null;
}

export interface AuditQuery {
  /** Inclusive lower bound on `time` (ISO 8601). */
  from?: string;
  /** Exclusive upper bound on `time` (ISO 8601). */
  to?: string;
  actor?: string;
  action?: string;
  /** Return entries older than this entry id (entries come newest first). */
  before?: string;
  limit: number;
}

export interface ListOptions {
  /** Only ids that start with this string. */
  prefix?: string;
  /** Only ids greater than this one (the cursor of the previous page). */
  after?: string;
  limit?: number;
}

export interface Change {
  collection: string;
  id: string;
  /** The version written, or 0 for a delete. */
  version: number;
  op: "put" | "delete";
  /**
   * A put this store instance (this replica) wrote: the document as written,
   * so a reader that keeps it need not read it back. Absent for a delete and
   * for another replica's write (read it then, as of the version announced).
   * The very object the writer passed, shared with every listener: nobody
   * mutates it, before or after the write (copy to change).
   */
  readonly data?: unknown;
}

/**
 * `committedAt`: when the write was committed, in ms on the clock of the
 * replica that wrote it, where the feed carries it (svc_change_feed_lag_seconds).
 */
export type ChangeListener = (changes: Change[], committedAt?: number) => void;

export interface Store {
  /** `embedded`, `postgres` or `mongodb`; shown in health. */
  readonly backend: string;
  get<T>(collection: string, id: string): Promise<Doc<T> | null>;
  /**
   * The documents of `ids` that exist, by id: one round trip on an external
   * store, where a get per id would cost one each (a fleet-wide status batch
   * reads thousands).
   */
  getMany<T>(collection: string, ids: readonly string[]): Promise<Map<string, Doc<T>>>;
  /** Documents in ascending id order. */
  list<T>(collection: string, options?: ListOptions): Promise<Doc<T>[]>;
  count(collection: string): Promise<number>;
  /**
   * Applies every op and appends every audit entry in one transaction, or none
   * of them: a failed guard throws ConflictError("version_conflict"). Returns
   * the documents written by the puts, in op order. Acknowledged means durable.
   */
  write(ops: WriteOp[], audit?: AuditEntry[]): Promise<Doc[]>;
  queryAudit(query: AuditQuery): Promise<AuditEntry[]>;
  /** Deletes audit entries with `time` before the given instant; returns how many. */
  pruneAudit(before: string): Promise<number>;
  /** Names of the collections holding at least one document, sorted. */
  collections(): Promise<string[]>;
  /**
   * Writes documents exactly as given (versions and updatedAt included) and
   * audit entries as given, in one transaction, announcing nothing on the
   * change feed: for copying one store into another (`svc-server migrate`),
   * so every version a client holds stays valid. A document or audit id that
   * exists already fails the whole batch with ConflictError("restore_conflict").
   */
  restore(docs: Doc[], audit: AuditEntry[]): Promise<void>;
  /**
   * Called after each committed write with what it changed; returns an
   * unsubscribe. An external store calls it for the writes of every replica,
   * each once. `onResync`, where given, is called when changes may have been
   * missed (an external store's feed connection dropped and came back): a
   * watcher that caches what it read should read it again. The embedded
   * store never calls it.
   */
  watch(listener: ChangeListener, onResync?: () => void): () => void;
  /**
   * Resolves once this store's watchers have heard every write committed,
   * on any replica, before the call, or have been told to resync (when the
   * feed cannot show that in time): read-your-cluster's-writes for a cache
   * the feed keeps (view.ts), before an operation that must see every record
   * acknowledged anywhere, such as a bulk edit by matcher.
   */
  sync(): Promise<void>;
  /**
   * Throws when the backing storage cannot serve, within a bounded time: an
   * external store also proves that a write could take its locks now, so a
   * database whose writes stall (a table lock held) is not ready.
   */
  ping(): Promise<void>;
  close(): Promise<void>;
}
