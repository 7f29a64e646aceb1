/**
 * The delivery loop: every tick, each replica takes the due queue entries,
 * claims one per hook with a versioned put (a lease), POSTs it signed, and
 * logs the attempt. A failure is retried with exponential backoff and jitter
 * until a day after the first attempt. Nothing here blocks a request: the
 * loop runs on a timer and each POST has a timeout.
 */
import type { Logger } from "pino";
import { ConflictError } from "../errors.ts";
import { COLLECTORS } from "../collectors/collectors.ts";
import type { Collector } from "../../shared/collectors.ts";
import type { Doc, Store } from "../store/store.ts";
import { SIGNATURE_HEADER, signature } from "./signature.ts";
import { pinTarget, type Lookup } from "./url.ts";
import { QUEUE, type QueuedDelivery, type Webhooks } from "./webhooks.ts";

export interface DeliveryOptions {
  now?: () => number;
  tickMs?: number;
  /** First retry delay; doubles per attempt up to maxDelayMs, each scaled by a random 50–100%. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Attempts stop this long after the first one. */
  giveUpMs?: number;
  timeoutMs?: number;
  /** Resolves a hook's host to its addresses (default: the system resolver). */
  lookup?: Lookup;
}

/** How long a finished queue entry stays, as the marker that dedupes its event. */
const KEEP_DONE_MS = 2 * 86_400_000;

const DEFAULTS = { tickMs: 1000, baseDelayMs: 10_000, maxDelayMs: 3_600_000, giveUpMs: 86_400_000, timeoutMs: 10_000 };

export function retryDelay(attempts: number, base: number, max: number, random = Math.random()): number {
  return Math.round(Math.min(max, base * 2 ** Math.max(0, attempts - 1)) * (0.5 + random / 2));
}

export class WebhookSender {
  private readonly o: typeof DEFAULTS & { now: () => number; lookup?: Lookup };
  private timer: ReturnType<typeof setInterval> | undefined;
  /** Hooks with an attempt in flight here, and those attempts (stop waits for them). */
  private readonly inFlight = new Set<string>();
  private readonly attempts = new Set<Promise<void>>();
  private scanning = false;

  constructor(
    private readonly store: Store,
    private readonly hooks: Webhooks,
    private readonly logger: Logger,
    options: DeliveryOptions = {},
  ) {
    this.o = { ...DEFAULTS, now: Date.now, ...options };
  }

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.o.tickMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all(this.attempts);
  }

  /** One pass over the queue; resolves when the attempts it started end. A slow receiver holds only its own hook. */
  async tick(): Promise<void> {
    if (this.scanning) return;
    this.scanning = true;
    let started: Promise<void>[] = [];
    try {
      started = await this.scan();
    } catch (error) {
      this.logger.warn({ err: error }, "webhook queue pass failed");
    } finally {
      this.scanning = false;
    }
    await Promise.all(started);
  }

  private async scan(): Promise<Promise<void>[]> {
    const now = this.o.now();
    const due = new Map<string, Doc<QueuedDelivery>>();
    for (const doc of await this.store.list<QueuedDelivery>(QUEUE)) {
      const item = doc.data;
      if (item.doneAt !== undefined) {
        if (item.doneAt < now - KEEP_DONE_MS)
          await this.store.write([{ op: "delete", collection: QUEUE, id: doc.id, expect: doc.version }]).catch(() => undefined);
        continue;
      }
      if (item.nextAt > now || item.leaseUntil > now || this.inFlight.has(item.hookId)) continue;
      const held = due.get(item.hookId);
      if (!held || held.data.nextAt > item.nextAt) due.set(item.hookId, doc);
    }
    return [...due.values()].map((doc) => {
      this.inFlight.add(doc.data.hookId);
      const attempt = this.attempt(doc).finally(() => {
        this.inFlight.delete(doc.data.hookId);
        this.attempts.delete(attempt);
      });
      this.attempts.add(attempt);
      return attempt;
    });
  }

  private async attempt(doc: Doc<QueuedDelivery>): Promise<void> {
    const item = doc.data;
    try {
      // The claim: only the replica whose put lands sends this attempt.
      let version: number;
      try {
        const claimed = { ...item, leaseUntil: this.o.now() + this.o.timeoutMs * 3 };
        [{ version }] = (await this.store.write([{ op: "put", collection: QUEUE, id: doc.id, data: claimed, expect: doc.version }])) as [Doc];
      } catch (error) {
        if (error instanceof ConflictError) return;
        throw error;
      }
      const finish = () =>
        this.store
          .write([{ op: "put", collection: QUEUE, id: doc.id, data: { ...item, doneAt: this.o.now(), leaseUntil: 0 }, expect: version }])
          .catch(() => undefined);
      if (item.check && !(await this.holds(item.check))) return void (await finish());
      const target = await this.hooks.forDelivery(item.hookId);
      if (!target) return void (await finish());
      const started = this.o.now();
      const body = JSON.stringify({ id: item.eventId, event: item.event, time: item.time, data: item.data });
      let httpStatus: number | null = null;
      let error: string | null = null;
      try {
        // Checked at every attempt (what the name resolves to may have changed since it was saved), and connected to as checked (url.ts).
        // One deadline for the lookup and the request: a resolver that never answers holds this delivery no longer than a receiver could.
        const deadline = AbortSignal.timeout(this.o.timeoutMs);
        const pinned = await abortable(pinTarget(target.hook.url, this.hooks.allowPrivateTargets, this.o.lookup), deadline);
        if ("refused" in pinned) error = pinned.refused;
        const response =
          "refused" in pinned
            ? null
            : await fetch(pinned.url, {
                method: "POST",
                headers: {
                  "Content-Type": "application/json",
                  [SIGNATURE_HEADER]: signature(target.secret, Math.floor(started / 1000), body),
                  "User-Agent": "svc-webhooks",
                  ...(pinned.host ? { Host: pinned.host } : {}),
                },
                body,
                redirect: "manual",
                signal: deadline,
                ...(pinned.serverName && pinned.url.startsWith("https:") ? { tls: { serverName: pinned.serverName } } : {}),
              });
        if (response) {
          httpStatus = response.status;
          await response.body?.cancel();
          if (httpStatus < 200 || httpStatus > 299) error = `HTTP ${httpStatus}`;
        }
      } catch (e) {
        error = e instanceof Error ? e.message : String(e);
      }
      const attempts = item.attempts + 1;
      const firstAttemptAt = item.firstAttemptAt ?? new Date(started).toISOString();
      const giveUp = error !== null && started - Date.parse(firstAttemptAt) >= this.o.giveUpMs;
      const nextAt = error === null || giveUp ? null : started + retryDelay(attempts, this.o.baseDelayMs, this.o.maxDelayMs);
      const status = error === null ? "delivered" : giveUp ? "abandoned" : "failed";
      await this.hooks.log(item.hookId, {
        eventId: item.eventId,
        event: item.event,
        attempt: attempts,
        status,
        httpStatus,
        error,
        time: new Date(started).toISOString(),
        durationMs: Math.max(0, this.o.now() - started),
        nextAttemptAt: nextAt === null ? null : new Date(nextAt).toISOString(),
      });
      if (nextAt === null) await finish();
      else
        await this.store
          .write([{ op: "put", collection: QUEUE, id: doc.id, data: { ...item, attempts, firstAttemptAt, nextAt, leaseUntil: 0 }, expect: version }])
          .catch(() => undefined);
      if (error) this.logger.info({ hookId: item.hookId, event: item.event, attempt: attempts, status, error }, "webhook delivery failed");
    } catch (error) {
      this.logger.warn({ err: error, hookId: item.hookId }, "webhook delivery attempt failed");
    }
  }

  private async holds(check: NonNullable<QueuedDelivery["check"]>): Promise<boolean> {
    const collector = (await this.store.get<Collector>(COLLECTORS, check.collectorId))?.data;
    return collector?.status === "offline" && (collector.lastSeen ?? null) === check.lastSeen;
  }
}

/** `promise`, or the signal's reason once it aborts first. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
