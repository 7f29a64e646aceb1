/**
 * Runs a dry-run in a Bun worker, so no pattern or condition a caller sends
 * can hold the server's event loop: the worker is terminated at the
 * deadline and the caller gets 422 dry_run_too_slow naming the processor it
 * was in. JavaScript regexes backtrack (RE2's linear-time engine is not
 * available under Bun in a usable form, see README.md), so the bound is
 * the deadline, not the pattern.
 *
 * The input crosses to the worker as JSON text and the output comes back as
 * JSON text: a string is one copy, while a parsed 10 MiB object is cloned
 * field by field on the sending thread (~200 ms on the server's).
 * Workers are few (one core is left to the event loop) and the queue is
 * short, so a flood of slow dry-runs is answered 503 rather than stacked up.
 * A worker that answered is kept for the next run (starting one and loading
 * the OTTL modules costs tens of milliseconds); one that was stopped or
 * failed is not reused.
 */
import { AppError, UnavailableError, type ErrorDetail } from "../errors.ts";
import { DRY_RUN_BUDGET_MS, DryRunTooSlowError, type ChainProcessor, type DryRunStep } from "./dryrun.ts";

export interface DryRunRequest {
  input: string;
  processors: readonly ChainProcessor[];
  budgetMs: number;
}

export type DryRunReply =
  | { kind: "step"; index: number }
  | { kind: "done"; output: string; steps: DryRunStep[] }
  | { kind: "refused"; status: number; code: string; message: string; details: ErrorDetail[] }
  | { kind: "failed"; message: string };

/** A finished dry-run: `output` is the Final Output as JSON text, ready to be sent. */
export interface IsolatedDryRun {
  output: string;
  steps: DryRunStep[];
}

/** Past the budget the worker's own check normally answers first; this is the hard stop behind it. */
const HARD_STOP_GRACE_MS = 250;

export const MAX_RUNNING_DRY_RUNS = Math.min(4, Math.max(1, navigator.hardwareConcurrency - 1));
export const MAX_QUEUED_DRY_RUNS = 8;

/**
 * Run from source, the worker sits beside this module. In the compiled
 * server it is a second entry point of the build (package.json, scripts/
 * package.sh), stored under the bundle's root as `ottl/dryrun-worker.ts`,
 * while this module is bundled into main at that root.
 */
const WORKER_URL = import.meta.url.startsWith("file:///$bunfs/")
  ? new URL("./ottl/dryrun-worker.ts", import.meta.url)
  : new URL("./dryrun-worker.ts", import.meta.url);

let running = 0;
const waiting: (() => void)[] = [];
/** Workers that answered their last run, unref'd so an idle one never keeps the process alive. */
const idle: BunWorker[] = [];
/** The DOM typings in scope hide Bun's ref/unref on Worker. */
type BunWorker = Worker & Pick<Bun.Worker, "ref" | "unref">;

/** Throws what dryRun throws (ValidationError, DryRunTooSlowError), or UnavailableError when too many are queued. */
export async function dryRunIsolated(input: unknown, processors: readonly ChainProcessor[], budgetMs = DRY_RUN_BUDGET_MS): Promise<IsolatedDryRun> {
  if (running >= MAX_RUNNING_DRY_RUNS) {
    if (waiting.length >= MAX_QUEUED_DRY_RUNS) {
      throw new UnavailableError(`${running + waiting.length} dry-runs are running or waiting; try again shortly.`, 5, "dry_run_busy");
    }
    await new Promise<void>((resolve) => waiting.push(resolve));
  } else {
    running++;
  }
  try {
    return await inWorker({ input: JSON.stringify(input), processors, budgetMs });
  } finally {
    // The slot passes straight to the next waiter, so `running` never dips and lets a newcomer jump the queue.
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}

function inWorker(request: DryRunRequest): Promise<IsolatedDryRun> {
  const { processors, budgetMs } = request;
  return new Promise((resolve, reject) => {
    const worker = idle.pop() ?? (new Worker(WORKER_URL) as BunWorker);
    worker.ref();
    let current = 0;
    const finish = (reusable: boolean, settle: () => void) => {
      clearTimeout(timer);
      worker.onmessage = null;
      worker.onerror = null;
      if (reusable && idle.length < MAX_RUNNING_DRY_RUNS) {
        worker.unref();
        idle.push(worker);
      } else {
        worker.terminate();
      }
      settle();
    };
    const timer = setTimeout(() => {
      finish(false, () => reject(new DryRunTooSlowError(budgetMs, processors[current]?.nodeId ?? "input")));
    }, budgetMs + HARD_STOP_GRACE_MS);
    worker.onmessage = ({ data }: MessageEvent<DryRunReply>) => {
      switch (data.kind) {
        case "step":
          current = data.index;
          return;
        case "done":
          return finish(true, () => resolve({ output: data.output, steps: data.steps }));
        case "refused":
          return finish(true, () => reject(new AppError(data.status, data.code, data.message, data.details)));
        case "failed":
          return finish(false, () => reject(new Error(`The dry-run worker failed: ${data.message}`)));
      }
    };
    worker.onerror = (event) => finish(false, () => reject(new Error(`The dry-run worker failed: ${event.message}`)));
    worker.postMessage(request);
  });
}
