/**
 * Plumbing every external Store adapter needs whatever its database: the
 * watchers of the change feed (a failing listener never stops the others),
 * the echo a write waits for (its own change reaching this replica's
 * watchers), opening in the background with jittered backoff while the
 * database cannot be reached yet, and the lifecycle around it (ExternalStore:
 * open now or in the background, unavailable until open, closed for good).
 */
import { StorageUnavailableError } from "../errors.ts";
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

  emit(changes: Change[], committedAt?: number): void {
    for (const watcher of [...this.set]) {
      if (!this.set.has(watcher)) continue;
      try {
        watcher.changes(changes, committedAt);
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

/** How long a write waits for its own announcement before telling watchers to resync. */
const ECHO_TIMEOUT_MS = 2000;
/** Seconds clients are told to wait (Retry-After) while the database is unreachable. */
const RETRY_AFTER_SECONDS = 5;

export interface ConnectOptions {
  /** Told of each failed attempt to open and how long until the next one. */
  onRetry?: (error: Error, delayMs: number) => void;
  /** Bounds of the delay between attempts (default 0.5 s to 30 s). */
  backoff?: Backoff;
}

/**
 * What the external adapters share around their own database work: opening
 * (at once, or in the background while the database cannot be reached),
 * refusing operations until open and after close, the change feed's
 * watchers and the echoes writes wait for.
 */
export abstract class ExternalStore {
  protected readonly watchers = new Watchers();
  protected readonly echoes = new Echoes(ECHO_TIMEOUT_MS);
  protected closed = false;
  /** Opened (migrated, following the feed); until then every operation throws StorageUnavailableError. */
  private opened = false;
  /** Why the last attempt to open failed, for the errors thrown meanwhile. */
  private openError: string | null = null;

  /** `database` names the database in errors ("PostgreSQL", "MongoDB"). */
  protected constructor(private readonly database: string) {}

  /** One attempt to open: connect, migrate, follow the change feed. Called again after a retryable failure. */
  protected abstract attach(): Promise<void>;
  /** True for a failure of `attach` that waiting can fix (unreachable, refused a session); anything else ends the attempts. */
  protected abstract retryableAtOpen(error: unknown): boolean;
  /** Lets go of the database's connections; watchers and echoes are already released. */
  protected abstract release(): Promise<void>;

  /** Opens now; closes the store and throws when it cannot. */
  protected async openNow(): Promise<this> {
    try {
      await this.start();
    } catch (error) {
      await this.close();
      throw error;
    }
    return this;
  }

  /**
   * Opens in the background: while the database is unreachable it tries
   * again with exponential backoff and jitter. The store comes at once;
   * `ready` resolves once it is open, and rejects on an error that waiting
   * cannot fix or when closed first.
   */
  protected openLater<S extends ExternalStore>(this: S, options: ConnectOptions): { store: S; ready: Promise<void> } {
    const ready = openInBackground({
      name: this.database,
      start: () => this.start(),
      closed: () => this.closed,
      retryable: (error) => this.retryableAtOpen(error),
      failed: (error, delayMs) => {
        this.openError = error.message;
        options.onRetry?.(error, delayMs);
      },
      ...(options.backoff ? { backoff: options.backoff } : {}),
    });
    return { store: this, ready };
  }

  private async start(): Promise<void> {
    await this.attach();
    this.opened = true;
    this.openError = null;
  }

  protected assertOpen(): void {
    if (this.closed) throw new Error(`the ${this.database} store is closed`);
    if (!this.opened) {
      throw new StorageUnavailableError(
        `The database (${this.database}) is not reachable yet${this.openError ? `: ${this.openError}` : ""}; the server keeps trying. Retry later.`,
        RETRY_AFTER_SECONDS,
      );
    }
  }

  /** The error an operation gets while the database is unreachable (never includes the URI, so never a password). */
  protected unavailable(error: unknown): StorageUnavailableError {
    const reason = error instanceof Error ? error.message : String(error);
    const failure = new StorageUnavailableError(`The database (${this.database}) is unreachable: ${reason}. Retry later.`, RETRY_AFTER_SECONDS);
    failure.cause = error;
    return failure;
  }

  /** The error of a database that answers but whose writes stall (`reason`: what could not be done in time). */
  protected stalled(reason: string): StorageUnavailableError {
    return new StorageUnavailableError(`The database (${this.database}) is not taking writes: ${reason}. Retry later.`, RETRY_AFTER_SECONDS);
  }

  /** The error of a write whose COMMIT got no answer and whose outcome cannot be learned: never reported as success. */
  protected commitUnknown(error: unknown): StorageUnavailableError {
    const failure = new StorageUnavailableError(
      `The database connection was lost while committing, and whether the write was stored cannot be learned now (${(error as Error).message}). Read the record again before repeating the change.`,
      RETRY_AFTER_SECONDS,
    );
    failure.cause = error;
    return failure;
  }

  /**
   * `listener` hears every committed write of any replica once; `onResync`
   * hears that changes may have been missed (the feed dropped and came back,
   * or records expired before this replica read them).
   */
  watch(listener: ChangeListener, onResync?: () => void): () => void {
    return this.watchers.add(listener, onResync);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.watchers.clear();
    this.echoes.releaseAll();
    await this.release();
  }
}
