/**
 * Deletes audit entries older than storage.auditLogRetentionDays, and runs
 * the other retention jobs (spent enrollment tokens), once at start and then
 * hourly. The clock is injected so tests need not wait.
 */
import type { Logger } from "pino";
import type { Store } from "../store/store.ts";

const DAY_MS = 86_400_000;

export async function pruneExpiredAudit(store: Store, retentionDays: number, now: Date): Promise<number> {
  return store.pruneAudit(new Date(now.getTime() - retentionDays * DAY_MS).toISOString());
}

/** Another kind of record to prune on the same tick; answers how many it removed. */
export interface RetentionJob {
  name: string;
  run(now: Date): Promise<number>;
}

export interface RetentionOptions {
  retentionDays: number;
  jobs?: RetentionJob[];
  logger: Logger;
  now?: () => Date;
  intervalMs?: number;
}

/** Starts the periodic job; returns a function that stops it. */
export function startAuditRetention(store: Store, options: RetentionOptions): () => void {
  const now = options.now ?? (() => new Date());
  const jobs: RetentionJob[] = [
    { name: "audit entries", run: (at) => pruneExpiredAudit(store, options.retentionDays, at) },
    ...(options.jobs ?? []),
  ];
  const run = async () => {
    for (const job of jobs) {
      try {
        const removed = await job.run(now());
        if (removed > 0) options.logger.info({ removed }, `pruned expired ${job.name}`);
      } catch (error) {
        options.logger.error({ err: error }, `retention of ${job.name} failed`);
      }
    }
  };
  void run();
  const timer = setInterval(run, options.intervalMs ?? 3_600_000);
  timer.unref();
  return () => clearInterval(timer);
}
