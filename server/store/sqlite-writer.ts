/**
 * Where the embedded store's writes run (docs/architecture.md "The store",
 * Writes off the event loop). bun:sqlite is synchronous: on the server's
 * thread every commit held the event loop for its B-tree work and its fsync,
 * which on a busy disk is tens of milliseconds, and at fleet scale polls,
 * pushes and API reads all queued behind it. A file-backed store therefore
 * writes on a thread of its own (sqlite-worker.ts), by group commit: the
 * writes asked for while a batch is being committed go together as the next
 * batch, one transaction and one fsync, each still atomic on its own
 * (sqlite-batch.ts). At most one batch is in flight, so writes commit in the
 * order they were asked for. Reads stay on the server's connection; in WAL
 * mode they see every committed write.
 *
 * A `:memory:` database cannot be opened by another thread; it writes inline.
 *
 * Run from source, the worker sits beside this module; in the compiled server
 * it is another entry point of the build (package.json, scripts/package.sh),
 * stored under the bundle's root as `store/sqlite-worker.ts`.
 */
import type { Database } from "bun:sqlite";
import { commitBatch, prepare, type EncodedWrite, type Statements, type WriteOutcome } from "./sqlite-batch.ts";

export interface WriterRequest {
  path: string;
  batch: number;
  writes: EncodedWrite[];
}

export type WriterReply = { batch: number; outcomes: WriteOutcome[] } | { batch: number; failed: string };

/** Commits one write and answers its outcome once it is durable. */
export interface Writer {
  commit(write: EncodedWrite): Promise<WriteOutcome>;
  /** Resolves once every write asked for so far has its outcome. */
  drained(): Promise<void>;
  /** Drains, then stops the thread. */
  close(): Promise<void>;
}

/** On the caller's thread, one write at a time (a `:memory:` database). */
export class InlineWriter implements Writer {
  private readonly stmts: Statements;

  constructor(private readonly db: Database) {
    this.stmts = prepare(db);
  }

  async commit(write: EncodedWrite): Promise<WriteOutcome> {
    return commitBatch(this.db, this.stmts, [write])[0]!;
  }

  async drained(): Promise<void> {}

  async close(): Promise<void> {}
}

const WORKER_URL = import.meta.url.startsWith("file:///$bunfs/")
  ? new URL("./store/sqlite-worker.ts", import.meta.url)
  : new URL("./sqlite-worker.ts", import.meta.url);

/** The DOM typings in scope hide Bun's ref/unref on Worker. */
type BunWorker = Worker & Pick<Bun.Worker, "ref" | "unref">;

interface Pending {
  write: EncodedWrite;
  resolve: (outcome: WriteOutcome) => void;
  reject: (error: Error) => void;
}

/** On a writer thread, by group commit (above). */
export class ThreadWriter implements Writer {
  private worker: BunWorker | null = null;
  private queued: Pending[] = [];
  private inFlight: { batch: number; writes: Pending[] } | null = null;
  private batches = 0;
  private flushing = false;
  private idle: (() => void)[] = [];

  constructor(private readonly path: string) {}

  commit(write: EncodedWrite): Promise<WriteOutcome> {
    return new Promise((resolve, reject) => {
      this.queued.push({ write, resolve, reject });
      // Writes asked for in the same turn go in one batch.
      if (!this.flushing && this.inFlight === null) {
        this.flushing = true;
        queueMicrotask(() => {
          this.flushing = false;
          this.flush();
        });
      }
    });
  }

  drained(): Promise<void> {
    if (this.inFlight === null && this.queued.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  async close(): Promise<void> {
    await this.drained();
    this.worker?.terminate();
    this.worker = null;
  }

  private flush(): void {
    if (this.inFlight !== null || this.queued.length === 0) return;
    const writes = this.queued;
    this.queued = [];
    const batch = ++this.batches;
    this.inFlight = { batch, writes };
    const worker = this.thread();
    // Held while a batch is in flight, so the process waits for its writes; let go when idle.
    worker.ref();
    worker.postMessage({ path: this.path, batch, writes: writes.map((p) => p.write) } satisfies WriterRequest);
  }

  private thread(): BunWorker {
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER_URL) as BunWorker;
    worker.onmessage = ({ data }: MessageEvent<WriterReply>) => this.answered(data);
    // A thread that fails fails what it holds; the next write starts another.
    worker.onerror = (event) => {
      event.preventDefault();
      if (this.worker === worker) this.worker = null;
      worker.terminate();
      this.settle(new Error(`The embedded store's writer thread failed: ${event.message}`));
    };
    this.worker = worker;
    return worker;
  }

  private answered(reply: WriterReply): void {
    const flight = this.inFlight;
    if (flight === null || flight.batch !== reply.batch) return;
    if ("failed" in reply) {
      this.settle(new Error(`The embedded store could not write: ${reply.failed}`));
      return;
    }
    this.inFlight = null;
    flight.writes.forEach((pending, i) => pending.resolve(reply.outcomes[i]!));
    this.next();
  }

  /** Fails the batch in flight; what is queued goes next. */
  private settle(error: Error): void {
    const flight = this.inFlight;
    this.inFlight = null;
    for (const pending of flight?.writes ?? []) pending.reject(error);
    this.next();
  }

  private next(): void {
    if (this.queued.length > 0) {
      this.flush();
      return;
    }
    this.worker?.unref();
    for (const resolve of this.idle.splice(0)) resolve();
  }
}
