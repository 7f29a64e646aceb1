/**
 * Plumbing every external Store adapter needs whatever its database: the
 * watchers of the change feed (a failing listener never stops the others),
 * the echo a write waits for (its own change reaching this replica's
 * watchers), and opening in the background with jittered backoff while the
 * database cannot be reached yet.
 */
import type { Change, ChangeListener } from "./store.ts";

interface Watcher {
  changes: ChangeListener;
  resync?: () => void;
}

/** The listeners of one store's change feed. */
export class Watchers {
  private readonly set = new Set<Watcher>();

  add(listener: ChangeListener, onResync?: () => void): () => void {
    const watcher: Watcher = { changes: listener, ...(onResync ? { resync: onResync } : {}) };
    this.set.add(watcher);
    return () => this.set.delete(watcher);
  }

  emit(changes: Change[]): void {
    for (const watcher of [...this.set]) {
      if (!this.set.has(watcher)) continue;
      try {
        watcher.changes(changes);
      } catch (error) {
        console.error("svc store: a change listener failed", error);
      }
    }
  }

  /** Tells every watcher that it may have missed changes. */
  resync(): void {
    for (const watcher of [...this.set]) {
      try {
        watcher.resync?.();
      } catch (error) {
        console.error("svc store: a resync listener failed", error);
      }
    }
  }

  clear(): void {
    this.set.clear();
  }
}

/** This replica's writes waiting for their own announcement on the feed, by write token. */
export class Echoes {
  private readonly waiting = new Map<string, () => void>();

  constructor(private readonly timeoutMs: number) {}

  /**
   * Registers `token` (before the write commits: the announcement may
   * overtake the commit's answer). `wait` resolves true when it came, false
   * after the timeout; `cancel` resolves it true at once.
   */
  expect(token: string): { wait: Promise<boolean>; cancel: () => void } {
    let settle!: (came: boolean) => void;
    const wait = new Promise<boolean>((resolve) => (settle = resolve));
    const timer = setTimeout(() => {
      this.waiting.delete(token);
      settle(false);
    }, this.timeoutMs);
    this.waiting.set(token, () => {
      clearTimeout(timer);
      settle(true);
    });
    return {
      wait,
      cancel: () => {
        this.waiting.delete(token);
        clearTimeout(timer);
        settle(true);
      },
    };
  }

  /** The announcement of `token` arrived. */
  arrived(token: string): void {
    const release = this.waiting.get(token);
    if (!release) return;
    this.waiting.delete(token);
    release();
  }

  /** Releases every waiting write (the feed is down; its return tells watchers to resync). */
  releaseAll(): void {
    const all = [...this.waiting.values()];
    this.waiting.clear();
    for (const release of all) release();
  }
}

export interface Backoff {
  minMs: number;
  maxMs: number;
}

/** Delays between attempts to open in the background: doubling from min to max, jittered. */
export const OPEN_BACKOFF: Backoff = { minMs: 500, maxMs: 30_000 };

/** The delay before attempt `attempt + 1`: doubling, capped, then jittered over its upper half, so replicas restarted together spread out. */
export function backoffDelay(attempt: number, { minMs, maxMs }: Backoff, random = Math.random()): number {
  const cap = Math.min(maxMs, minMs * 2 ** Math.min(attempt, 30));
  return Math.round(cap / 2 + (random * cap) / 2);
}

export interface OpenInBackground {
  /** One attempt to open. */
  start(): Promise<void>;
  /** True once the store was closed: stop trying. */
  closed(): boolean;
  /** True for a failure that waiting can fix (unreachable, refused a session); anything else ends the attempts. */
  retryable(error: unknown): boolean;
  /** Told of each failed attempt that will be retried. */
  failed(error: Error, delayMs: number): void;
  /** Names the store in the error when it is closed before it opened. */
  name: string;
  backoff?: Backoff;
}

/** Calls `start` until it succeeds, sleeping with backoff between retryable failures. */
export async function openInBackground(target: OpenInBackground): Promise<void> {
  const backoff = target.backoff ?? OPEN_BACKOFF;
  for (let attempt = 0; ; attempt++) {
    if (target.closed()) throw new Error(`the ${target.name} store was closed before it could open`);
    try {
      await target.start();
      return;
    } catch (error) {
      if (target.closed()) throw new Error(`the ${target.name} store was closed before it could open`, { cause: error });
      if (!target.retryable(error)) throw error;
      const delay = backoffDelay(attempt, backoff);
      target.failed(error as Error, delay);
      await Bun.sleep(delay);
    }
  }
}
