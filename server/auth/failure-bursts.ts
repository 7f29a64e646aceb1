/**
 * Auth-failure bursts: every 401 the HTTP edge answers is counted per remote
 * address and kind of credential in a fixed window, and a window that saw at
 * least `threshold` failures leaves one audit entry with the count, not one
 * per request: a password or token guesser shows up in the audit log without
 * being able to flood it. Counted in memory per instance (an HA replica
 * audits what it saw).
 */
import type { Logger } from "pino";
import { auditEntry } from "../audit/audit.ts";
import type { Store } from "../store/store.ts";
import { sessionCookie } from "./sessions.ts";
import { bearerToken, tokenKind } from "./tokens.ts";

export interface FailureBurstOptions {
  /** Length of a counting window (default 60 s). */
  windowMs?: number;
  /** Failures in one window that make it a burst worth an audit entry (default 5). */
  threshold?: number;
  /** Distinct (address, credential) pairs counted at once; failures past it count under one overflow key. */
  maxKeys?: number;
}

interface Burst {
  remoteAddr: string | null;
  credential: string;
  count: number;
  since: number;
  /** Up to MAX_PATHS distinct paths, to say what was tried. */
  paths: Set<string>;
}

const MAX_PATHS = 10;
const OVERFLOW = "\0overflow";

/**
 * What a failed request presented, without the secret: `none`, `session`
 * (the UI cookie), a token kind (`serviceAccount`, `collector`...), `bearer`
 * for an unknown kind, or `other` for a non-Bearer Authorization.
 */
export function credentialKind(req: Request): string {
  const authorization = req.headers.get("authorization");
  if (authorization !== null) {
    const token = bearerToken(authorization);
    return token === null ? "other" : (tokenKind(token) ?? "bearer");
  }
  return sessionCookie(req.headers.get("cookie")) === null ? "none" : "session";
}

export class AuthFailureBursts {
  private readonly bursts = new Map<string, Burst>();
  private readonly windowMs: number;
  private readonly threshold: number;
  private readonly maxKeys: number;
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
    options: FailureBurstOptions = {},
  ) {
    this.windowMs = options.windowMs ?? 60_000;
    this.threshold = options.threshold ?? 5;
    this.maxKeys = options.maxKeys ?? 10_000;
  }

  /** Counts one 401. */
  record(remoteAddr: string | null, credential: string, path: string, now = Date.now()): void {
    let key = `${remoteAddr ?? ""}\0${credential}`;
    if (!this.bursts.has(key) && this.bursts.size >= this.maxKeys) key = OVERFLOW;
    let burst = this.bursts.get(key);
    if (!burst) {
      burst =
        key === OVERFLOW
          ? { remoteAddr: null, credential: "many", count: 0, since: now, paths: new Set() }
          : { remoteAddr, credential, count: 0, since: now, paths: new Set() };
      this.bursts.set(key, burst);
    }
    burst.count++;
    if (burst.paths.size < MAX_PATHS) burst.paths.add(path);
  }

  /**
   * Ends every window that is over (all of them with `all`, at shutdown) and
   * writes one audit entry per window that reached the threshold.
   */
  async flush(now = Date.now(), all = false): Promise<void> {
    const ended: Burst[] = [];
    for (const [key, burst] of this.bursts) {
      if (!all && now - burst.since < this.windowMs) continue;
      this.bursts.delete(key);
      if (burst.count >= this.threshold) ended.push(burst);
    }
    if (ended.length === 0) return;
    const entries = ended.map((b) =>
      auditEntry(
        { actor: "anonymous", remoteAddr: b.remoteAddr },
        "auth.failure_burst",
        "credential",
        b.credential,
        {
          count: b.count,
          since: new Date(b.since).toISOString(),
          until: new Date(Math.min(now, b.since + this.windowMs)).toISOString(),
          paths: [...b.paths],
        },
        "failure",
        new Date(now),
      ),
    );
    try {
      await this.store.write([], entries);
    } catch (error) {
      // Storage down: the bursts still reach the log, and nothing else waits on this.
      this.logger.warn({ err: error, bursts: entries.map((e) => ({ remoteAddr: e.remoteAddr, ...e.details })) }, "auth-failure bursts not audited");
    }
  }

  /** Flushes once per window in the background. */
  start(): void {
    this.timer ??= setInterval(() => void this.flush(), this.windowMs);
    this.timer.unref?.();
  }

  /** Stops the timer and audits what was counted so far. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.flush(Date.now(), true);
  }
}
