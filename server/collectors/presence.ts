/**
 * Collector status from channel contact (DESIGN.md §5): the first contact
 * makes a collector `online`; a false health report or a failed config makes
 * it `degraded`; no contact for three times its promised interval makes it
 * `offline`. Status changes are stored within a second; `lastSeen` alone is
 * stored at most every 15 s per collector, so a fleet of heartbeats costs a
 * handful of coalesced writes, not one fsync each.
 */
import type { Logger } from "pino";
import { Coalescer } from "../store/coalesce.ts";
import type { Store } from "../store/store.ts";
import type { Collector, CollectorHealth, Collectors, CollectorStatus } from "./collectors.ts";

export interface Contact {
  channel: CollectorHealth["channel"];
  intervalSeconds: number;
  /** The collector's health report, when this contact carried one. */
  healthy?: boolean;
  /** The collector's health message, or its config error; null clears it. */
  error?: string | null;
}

/** How stale a stored `lastSeen` may get while the collector keeps calling. */
const LAST_SEEN_RESOLUTION_MS = 15_000;
const OFFLINE_AFTER_INTERVALS = 3;

function statusOf(health: CollectorHealth): CollectorStatus {
  return health.healthy === false || health.error !== null ? "degraded" : "online";
}

export class Presence {
  private readonly writes: Coalescer<Collector>;
  /** When this process last queued a lastSeen write per collector. */
  private readonly written = new Map<string, number>();
  /** The last contact this process saw per collector (the stored lastSeen may lag it). */
  private readonly contacts = new Map<string, number>();
  private sweeper: ReturnType<typeof setInterval> | null = null;

  constructor(
    store: Store,
    private readonly collectors: Collectors,
    log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.writes = new Coalescer(store, "collectors", 200, log);
  }

  /** Records a contact; resolves when any resulting change is stored. */
  async seen(collectorId: string, contact: Contact): Promise<void> {
    const current = await this.collectors.get(collectorId).catch(() => null);
    if (!current) return;
    const previous = current.health;
    const health: CollectorHealth = {
      channel: contact.channel,
      intervalSeconds: contact.intervalSeconds,
      healthy: contact.healthy ?? (previous?.channel === contact.channel ? previous.healthy : null),
      error: contact.error !== undefined ? contact.error : (previous?.error ?? null),
    };
    const now = this.now();
    this.contacts.set(collectorId, now);
    const changed =
      current.status !== statusOf(health) ||
      previous === null ||
      previous.healthy !== health.healthy ||
      previous.error !== health.error ||
      previous.intervalSeconds !== health.intervalSeconds ||
      previous.channel !== health.channel;
    const stale = now - (this.written.get(collectorId) ?? 0) >= LAST_SEEN_RESOLUTION_MS;
    if (!changed && !stale) return;
    this.written.set(collectorId, now);
    const lastSeen = new Date(now).toISOString();
    await this.writes.update(collectorId, (doc) => doc && { ...doc, health, status: statusOf(health), lastSeen, });
  }

  /** A collector said goodbye (OpAMP agent_disconnect): offline now rather than after the window. */
  async gone(collectorId: string): Promise<void> {
    this.written.delete(collectorId);
    this.contacts.delete(collectorId);
    await this.writes.update(collectorId, (doc) => doc && doc.status !== "pending" ? { ...doc, status: "offline" } : null);
  }

  /** Marks offline every connected collector whose last contact is older than three intervals. */
  async sweep(): Promise<number> {
    const now = this.now();
    const late = (await this.collectors.all()).filter((c) => {
      if ((c.status !== "online" && c.status !== "degraded") || c.health === null || c.lastSeen === null) return false;
      const window = OFFLINE_AFTER_INTERVALS * c.health.intervalSeconds * 1000;
      const local = this.contacts.get(c.id);
      // Contact through another replica shows only in the stored lastSeen, which may lag.
      const stored = Date.parse(c.lastSeen);
      if (local !== undefined && local >= stored) return now - local > window;
      return now - stored > window + LAST_SEEN_RESOLUTION_MS;
    });
    await Promise.all(
      late.map((c) =>
        this.writes.update(c.id, (doc) => {
          if (!doc || doc.lastSeen !== c.lastSeen || (doc.status !== "online" && doc.status !== "degraded")) return null;
          return { ...doc, status: "offline" };
        }),
      ),
    );
    return late.length;
  }

  start(intervalMs = 5000): void {
    this.sweeper ??= setInterval(() => void this.sweep().catch(() => {}), intervalMs);
  }

  async stop(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
    await this.writes.close();
  }
}
