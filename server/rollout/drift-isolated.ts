/**
 * Drift is judged in a Bun worker: reading a collector's YAML report costs
 * microseconds a byte (a 256 KiB report, the most one may hold, takes a second
 * or more on a busy machine), which the event loop must not spend. One
 * comparison runs at a time (callers queue, drift-judge.ts coalesces per collector);
 * past DRIFT_BUDGET_MS the worker is stopped and the answer says drift could
 * not be told. A worker that answered is kept for the next comparison.
 *
 * Run from source, the worker sits beside this module; in the compiled server
 * it is another entry point of the build (package.json, scripts/package.sh),
 * stored under the bundle's root as `rollout/drift-worker.ts`.
 */
import { KeyedLock } from "../lib/keyed-lock.ts";
import type { Drift, EffectiveFile } from "./drift.ts";

export interface DriftRequest {
  runtime: "otelcol" | "alloy";
  target: string;
  files: readonly EffectiveFile[];
}

export type DriftReply = { kind: "done"; drift: Drift } | { kind: "failed"; message: string };

/** Longest one comparison may take before it is given up. */
export const DRIFT_BUDGET_MS = 10_000;

const WORKER_URL = import.meta.url.startsWith("file:///$bunfs/")
  ? new URL("./rollout/drift-worker.ts", import.meta.url)
  : new URL("./drift-worker.ts", import.meta.url);

/** The DOM typings in scope hide Bun's ref/unref on Worker. */
type BunWorker = Worker & Pick<Bun.Worker, "ref" | "unref">;

let idle: BunWorker | null = null;
const turns = new KeyedLock();

/** configDrift's answer, computed in the worker. Throws when the worker fails (a bug, not an input). */
export function configDriftIsolated(runtime: DriftRequest["runtime"], target: string, files: readonly EffectiveFile[]): Promise<Drift> {
  return turns.run("drift", () => inWorker({ runtime, target, files }));
}

function inWorker(request: DriftRequest): Promise<Drift> {
  return new Promise((resolve, reject) => {
    const worker = idle ?? (new Worker(WORKER_URL) as BunWorker);
    idle = null;
    worker.ref();
    const finish = (reusable: boolean, settle: () => void) => {
      clearTimeout(timer);
      worker.onmessage = null;
      worker.onerror = null;
      if (reusable) {
        worker.unref();
        idle = worker;
      } else {
        worker.terminate();
      }
      settle();
    };
    const timer = setTimeout(() => {
      const seconds = DRIFT_BUDGET_MS / 1000;
      finish(false, () =>
        resolve({ drifted: false, diff: null, reason: `comparing the effective config with the target took longer than ${seconds} s; drift is not known` }),
      );
    }, DRIFT_BUDGET_MS);
    worker.onmessage = ({ data }: MessageEvent<DriftReply>) => {
      if (data.kind === "done") finish(true, () => resolve(data.drift));
      else finish(false, () => reject(new Error(`The drift worker failed: ${data.message}`)));
    };
    worker.onerror = (event) => finish(false, () => reject(new Error(`The drift worker failed: ${event.message}`)));
    worker.postMessage(request);
  });
}
