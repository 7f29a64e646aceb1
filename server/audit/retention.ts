/**
 * Deletes audit entries older than storage.auditLogRetentionDays, once at
 * start and then periodically. The clock is injected so tests need not wait.
 */
import type { Logger } from "pino";
import type { Store } from "../store/store.ts";

const DAY_MS = 86_400_000;

export async function pruneExpiredAudit(store: Store, retentionDays: number, now: Date): Promise<number> {
  return store.pruneAudit(new Date(now.getTime() - retentionDays * DAY_MS).toISOString());
}

export interface RetentionOptions {
  retentionDays: number;
  logger: Logger;
  now?: () => Date;
  intervalMs?: number;
}

/** Starts the periodic job; returns a function that stops it. */
export function startAuditRetention(store: Store, options: RetentionOptions): () => void {
  const now = options.now ?? (() => new Date());
  const run = async () => {
    try {
      const removed = await pruneExpiredAudit(store, options.retentionDays, now());
      if (removed > 0) options.logger.info({ removed, retentionDays: options.retentionDays }, "pruned expired audit entries");
    } catch (error) {
      options.logger.error({ err: error }, "audit retention run failed");
    }
  };
  void run();
  const timer = setInterval(run, options.intervalMs ?? 3_600_000);
  timer.unref();
  return () => clearInterval(timer);
}
