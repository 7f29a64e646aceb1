/**
 * Checkpoints of the embedded store's WAL on a thread of their own. SQLite
 * copies the WAL into the database file in the connection that commits once
 * the WAL passes 1,000 pages, and that copy (with its fsync) was about a third
 * of every write's time on the event loop: 100,000 presence-shaped updates took
 * 3.4-4.0 s of the committing thread with it, 2.4 s with a worker's connection
 * checkpointing every 25 ms beside it (BENCHMARKS.md, issue 36 third pass). The
 * server's connection then checkpoints only as a backstop (BACKSTOP_PAGES), should
 * the worker fall behind or fail. Durability is the WAL's, committed with FULL
 * sync before a write is answered; a checkpoint only moves what is durable.
 *
 * Started once the WAL has grown past `fromWalBytes`: a small store (a test's)
 * never needs a thread.
 *
 * Run from source, the worker sits beside this module; in the compiled server
 * it is another entry point of the build (package.json, scripts/package.sh),
 * stored under the bundle's root as `store/checkpoint-worker.ts`.
 */
import { statSync } from "node:fs";

export type CheckpointRequest = { kind: "start"; path: string; everyMs: number } | { kind: "close" };
export type CheckpointReply = { kind: "closed" } | { kind: "failed"; message: string };

/** The server connection's wal_autocheckpoint while a worker checkpoints: 40 MiB of WAL at most. */
export const BACKSTOP_PAGES = 10_000;
/** WAL size from which the worker starts: half of what SQLite's own checkpoints at 1,000 pages let it reach. */
export const START_FROM_WAL_BYTES = 2 * 1024 * 1024;
const EVERY_MS = 25;
/** Writes between looks at the WAL's size. */
const LOOK_EVERY = 64;
/** How long closing waits for the worker to close its connection. */
const CLOSE_WAIT_MS = 2_000;

const WORKER_URL = import.meta.url.startsWith("file:///$bunfs/")
  ? new URL("./store/checkpoint-worker.ts", import.meta.url)
  : new URL("./checkpoint-worker.ts", import.meta.url);

/** The DOM typings in scope hide Bun's ref/unref on Worker. */
type BunWorker = Worker & Pick<Bun.Worker, "ref" | "unref">;

export class Checkpointer {
  private worker: BunWorker | null = null;
  private writes = 0;

  /**
   * `backstop` sets the server connection's wal_autocheckpoint to the pages given, once the worker runs;
   * `warn` tells of a worker's failure (nothing is lost: the server's connection checkpoints then).
   */
  constructor(
    private readonly path: string,
    private readonly hooks: { backstop: (pages: number) => void; warn: (message: string) => void },
    private readonly fromWalBytes = START_FROM_WAL_BYTES,
  ) {}

  /** Whether the worker runs. */
  get running(): boolean {
    return this.worker !== null;
  }

  /** Called after each committed write: starts the worker once the WAL has grown past `fromWalBytes`. */
  written(): void {
    if (this.worker !== null || ++this.writes % LOOK_EVERY !== 0) return;
    let size: number;
    try {
      size = statSync(`${this.path}-wal`).size;
    } catch {
      return;
    }
    if (size >= this.fromWalBytes) this.start();
  }

  private start(): void {
    const worker = new Worker(WORKER_URL) as BunWorker;
    worker.unref();
    worker.onmessage = ({ data }: MessageEvent<CheckpointReply>) => {
      if (data.kind === "failed") this.hooks.warn(`the WAL checkpointer failed (the server's connection checkpoints meanwhile): ${data.message}`);
    };
    worker.onerror = (event) => this.hooks.warn(`the WAL checkpointer stopped: ${event.message}`);
    worker.postMessage({ kind: "start", path: this.path, everyMs: EVERY_MS } satisfies CheckpointRequest);
    this.worker = worker;
    this.hooks.backstop(BACKSTOP_PAGES);
  }

  /** Stops the worker once it has closed its connection (or after CLOSE_WAIT_MS). */
  async close(): Promise<void> {
    const worker = this.worker;
    if (worker === null) return;
    this.worker = null;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, CLOSE_WAIT_MS);
      worker.onmessage = ({ data }: MessageEvent<CheckpointReply>) => {
        if (data.kind !== "closed") return;
        clearTimeout(timer);
        resolve();
      };
      worker.onerror = () => {
        clearTimeout(timer);
        resolve();
      };
      worker.postMessage({ kind: "close" } satisfies CheckpointRequest);
    });
    worker.terminate();
  }
}
