/**
 * The Store given to createApp, counted: every call of the contract adds one
 * to svc_store_operations_total{op}, every rejected one to
 * svc_store_errors_total{op}, and the change feed's documents and resyncs are
 * counted by one watcher of its own, which also times each announced write
 * from its commit (svc_change_feed_lag_seconds). The children are looked up once here, so
 * a call costs an addition and, for the async ones, one extra promise.
 */
import type { AuditEntry, AuditQuery, ChangeListener, Doc, ListOptions, Store, WriteOp } from "../store/store.ts";
import type { CounterChild } from "./registry.ts";
import type { ServerMetrics } from "./metrics.ts";

const OPS = ["get", "getMany", "list", "count", "write", "queryAudit", "pruneAudit", "collections", "restore", "sync", "ping"] as const;
type Op = (typeof OPS)[number];

export class CountedStore implements Store {
  private readonly ops = {} as Record<Op, { calls: CounterChild; errors: CounterChild }>;
  private readonly unwatch: () => void;

  constructor(
    readonly inner: Store,
    metrics: ServerMetrics,
  ) {
    for (const op of OPS) this.ops[op] = { calls: metrics.storeOperations.labels(op), errors: metrics.storeErrors.labels(op) };
    const changes = metrics.storeChanges.labels();
    const resyncs = metrics.storeResyncs.labels();
    const lag = metrics.feedLag.labels();
    this.unwatch = inner.watch(
      (batch, committedAt) => {
        changes.inc(batch.length);
        // Replicas' clocks differ a little: a write heard "before" it was made is no lag, not a negative one.
        if (committedAt !== undefined) lag.observe(Math.max(0, Date.now() - committedAt) / 1000);
      },
      () => resyncs.inc(),
    );
  }

  get backend(): string {
    return this.inner.backend;
  }

  private counted<T>(op: Op, call: Promise<T>): Promise<T> {
    const counters = this.ops[op];
    counters.calls.inc();
    return call.catch((error: unknown) => {
      counters.errors.inc();
      throw error;
    });
  }

  get<T>(collection: string, id: string): Promise<Doc<T> | null> {
    return this.counted("get", this.inner.get<T>(collection, id));
  }
  getMany<T>(collection: string, ids: readonly string[]): Promise<Map<string, Doc<T>>> {
    return this.counted("getMany", this.inner.getMany<T>(collection, ids));
  }
  list<T>(collection: string, options?: ListOptions): Promise<Doc<T>[]> {
    return this.counted("list", this.inner.list<T>(collection, options));
  }
  count(collection: string): Promise<number> {
    return this.counted("count", this.inner.count(collection));
  }
  write(ops: WriteOp[], audit?: AuditEntry[]): Promise<Doc[]> {
    return this.counted("write", this.inner.write(ops, audit));
  }
  queryAudit(query: AuditQuery): Promise<AuditEntry[]> {
    return this.counted("queryAudit", this.inner.queryAudit(query));
  }
  pruneAudit(before: string): Promise<number> {
    return this.counted("pruneAudit", this.inner.pruneAudit(before));
  }
  collections(): Promise<string[]> {
    return this.counted("collections", this.inner.collections());
  }
  restore(docs: Doc[], audit: AuditEntry[]): Promise<void> {
    return this.counted("restore", this.inner.restore(docs, audit));
  }
  sync(): Promise<void> {
    return this.counted("sync", this.inner.sync());
  }
  watch(listener: ChangeListener, onResync?: () => void): () => void {
    return this.inner.watch(listener, onResync);
  }
  ping(): Promise<void> {
    return this.counted("ping", this.inner.ping());
  }
  /** The owner closes its own reference as before; a close through this one ends the counting watcher too. */
  close(): Promise<void> {
    this.unwatch();
    return this.inner.close();
  }
}
