/**
 * Deletes audit entries older than storage.auditLogRetentionDays, and runs
 * the other retention jobs (spent enrollment tokens), once at start and then
 * hourly. The clock is injected so tests need not wait. Replicas sharing an
 * external store all start it, but only the holder of the `retention` lease
 * prunes, so each tick prunes once across the cluster.
 */
import type { Logger } from "pino";
import { leaseFor } from "../store/lease.ts";
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

/** Starts the periodic job; returns a function that stops it and gives up the lease. */
export function startAuditRetention(store: Store, options: RetentionOptions): () => Promise<void> {
  const now = options.now ?? (() => new Date());
  const intervalMs = options.intervalMs ?? 3_600_000;
  // The holder renews on every tick; one missed tick keeps it, a second lets another replica take over.
  const lease = leaseFor(store, "retention", { ttlMs: 2 * intervalMs, now: () => now().getTime() });
  const jobs: RetentionJob[] = [{ name: "audit entries", run: (at) => pruneExpiredAudit(store, options.retentionDays, at) }, ...(options.jobs ?? [])];
  let stopped = false;
  const run = async () => {
    if (stopped) return;
    try {
      if (!(await lease.acquire())) return;
    } catch (error) {
      options.logger.error({ err: error }, "retention could not take its lease");
      return;
    }
    for (const job of jobs) {
      try {
        const removed = await job.run(now());
        if (removed > 0) options.logger.info({ removed }, `pruned expired ${job.name}`);
      } catch (error) {
        options.logger.error({ err: error }, `retention of ${job.name} failed`);
      }
    }
  };
  // Ticks queue behind a slow one rather than overlap; stopping waits for the one under way.
  let running = run();
  const timer = setInterval(() => (running = running.then(run)), intervalMs);
  timer.unref();
  return async () => {
    stopped = true;
    clearInterval(timer);
    await running;
    await lease.release().catch((error) => options.logger.warn({ err: error }, "releasing the retention lease failed"));
  };
}
