/**
 * The webhook events that come from time passing rather than from a write
 * (events.ts reads those from the change feed):
 * - `collector.stalled`: a connected collector's own metrics show no accepted
 *   records for N minutes after they showed some (telemetry/stall.ts);
 * - `token.expiring`: an enrollment token that could still enroll expires
 *   within N hours, or a quarter of its lifetime if shorter (Enrollment.expiring
 *   queues it, then marks it, so a crash between the two repeats it, deduped
 *   by its key, rather than losing it).
 * Every tick sweeps only for the events some hook wants, so a token is not
 * marked as announced before anyone listens.
 */
import type { Logger } from "pino";
import type { Collector } from "../../shared/collectors.ts";
import type { EnrollmentTokenView } from "../enrollment/enrollment.ts";
import type { StallDetector } from "../telemetry/stall.ts";
import type { Webhooks } from "./webhooks.ts";

export interface SweepSources {
  stalls: StallDetector;
  /** Visits every collector (Collectors.each). */
  eachCollector: (visit: (collector: Collector) => void) => Promise<void>;
  /** Enrollment.expiring: calls `announce` for each token due, then marks it. */
  expiring: (now: Date, withinMs: number, announce: (token: EnrollmentTokenView) => Promise<unknown>) => Promise<number>;
  tokenExpiringHours: number;
}

export interface SweepOptions {
  tickMs?: number;
  now?: () => number;
}

export class WebhookSweep {
  private timer: ReturnType<typeof setInterval> | undefined;
  private running: Promise<void> | null = null;
  private readonly tickMs: number;
  private readonly now: () => number;

  constructor(
    private readonly hooks: Webhooks,
    private readonly sources: SweepSources,
    private readonly logger: Logger,
    options: SweepOptions = {},
  ) {
    this.tickMs = options.tickMs ?? 15_000;
    this.now = options.now ?? Date.now;
  }

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.tickMs);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** One sweep; a sweep still running is not started twice. Never throws: a failure is logged and the next tick tries again. */
  tick(): Promise<void> {
    return (this.running ??= this.sweep()
      .catch((error) => this.logger.warn({ err: error }, "webhook sweep failed"))
      .finally(() => (this.running = null)));
  }

  private async sweep(): Promise<void> {
    const wanted = new Set((await this.hooks.list()).flatMap((hook) => hook.events));
    if (wanted.has("collector.stalled")) await this.stalled();
    if (wanted.has("token.expiring")) await this.expiring();
  }

  private async stalled(): Promise<void> {
    const connected = new Map<string, string>();
    await this.sources.eachCollector((c) => {
      if (c.status === "online" || c.status === "degraded") connected.set(c.id, c.name);
    });
    for (const stall of this.sources.stalls.sweep((id) => connected.has(id))) {
      await this.hooks.emit("collector.stalled", stall.key, {
        collectorId: stall.collectorId,
        name: connected.get(stall.collectorId) ?? null,
        lastAcceptedAt: stall.lastAcceptedAt,
        stalledMinutes: this.sources.stalls.stalledMs / 60_000,
      });
    }
  }

  private async expiring(): Promise<void> {
    await this.sources.expiring(new Date(this.now()), this.sources.tokenExpiringHours * 3_600_000, announceExpiring(this.hooks));
  }
}

/** Queues `token.expiring` for a token, keyed by the token and its expiry (so a repeat is one delivery). */
export function announceExpiring(hooks: Webhooks): (token: EnrollmentTokenView) => Promise<number> {
  return (token) =>
    hooks.emit("token.expiring", `${token.id}/${token.expiresAt}`, {
      tokenId: token.id,
      kind: token.kind,
      environment: token.environment,
      collectorId: token.collectorId,
      expiresAt: token.expiresAt,
    });
}
