/**
 * Collector status from channel contact (docs/architecture.md "Status model"): the first contact
 * makes a collector `online`; a false health report or a failed config makes
 * it `degraded`; no contact for three times its promised interval makes it
 * `offline`. Status changes are stored within a second; `lastSeen` alone is
 * stored at most every 15 s per collector, so a fleet of heartbeats costs a
 * handful of coalesced writes, not one fsync each.
 *
 * Replicas sharing an external store each record the contacts of their own
 * sessions, but only the holder of the `presence` lease sweeps, so a
 * collector is judged once, by one replica, from the lastSeen every replica
 * stores (see `sweep` for the margin that lag and clock skew call for).
 */
import type { Logger } from "pino";
import type { CollectorStatus } from "../../shared/collector-status.ts";
import type { Collector, CollectorHealth } from "../../shared/collectors.ts";
import { Coalescer } from "../store/coalesce.ts";
import { CLOCK_SKEW_MARGIN_MS, type Lease, leaseFor } from "../store/lease.ts";
import type { Store } from "../store/store.ts";
import type { Collectors } from "./collectors.ts";

export interface Contact {
  channel: CollectorHealth["channel"];
  intervalSeconds: number;
  /** The collector's health report, when this contact carried one. */
  healthy?: boolean;
  /** The collector's health message, or its config error; null clears it. */
  error?: string | null;
  /** Whether its channel can deliver config to it (OpAMP AcceptsRemoteConfig); true when unsaid. */
  acceptsRemoteConfig?: boolean;
}

/** How stale a stored `lastSeen` may get while the collector keeps calling. */
const LAST_SEEN_RESOLUTION_MS = 15_000;
const OFFLINE_AFTER_INTERVALS = 3;
const SWEEP_INTERVAL_MS = 5_000;
/** The sweeping replica may miss two ticks before another takes over. */
const SWEEP_LEASE_TTL_MS = 3 * SWEEP_INTERVAL_MS;

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
  /** The tick under way, which stopping waits for so it cannot take the lease back after release. */
  private ticking: Promise<void> = Promise.resolve();
  private readonly lease: Lease;
  /** Whether this process is the only one writing the store (embedded): then its own contacts are the whole truth. */
  private readonly solo: boolean;

  constructor(
    store: Store,
    private readonly collectors: Collectors,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.writes = new Coalescer(store, "collectors", 200, log, (id) => collectors.held(id));
    this.lease = leaseFor(store, "presence", { ttlMs: SWEEP_LEASE_TTL_MS, now });
    this.solo = store.backend === "embedded";
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
      acceptsRemoteConfig: contact.acceptsRemoteConfig ?? true,
    };
    const now = this.now();
    this.contacts.set(collectorId, now);
    const changed =
      current.status !== statusOf(health) ||
      previous === null ||
      previous.healthy !== health.healthy ||
      previous.error !== health.error ||
      previous.intervalSeconds !== health.intervalSeconds ||
      previous.channel !== health.channel ||
      previous.acceptsRemoteConfig !== health.acceptsRemoteConfig;
    const stale = now - (this.written.get(collectorId) ?? 0) >= LAST_SEEN_RESOLUTION_MS;
    if (!changed && !stale) return;
    this.written.set(collectorId, now);
    const lastSeen = new Date(now).toISOString();
    await this.writes.update(collectorId, (doc) => doc && { ...doc, health, status: statusOf(health), lastSeen });
  }

  /** A collector said goodbye (OpAMP agent_disconnect): offline now rather than after the window. */
  async gone(collectorId: string): Promise<void> {
    this.written.delete(collectorId);
    this.contacts.delete(collectorId);
    await this.writes.update(collectorId, (doc) => (doc && doc.status !== "pending" ? { ...doc, status: "offline" } : null));
  }

  /**
   * Marks offline every connected collector whose last contact is older than
   * three intervals. The latest contact anywhere may be newer than what this
   * process knows: the stored lastSeen lags a collector's contacts by up to
   * LAST_SEEN_RESOLUTION_MS, and in a cluster it is written by other
   * replicas' clocks, so the window grows by that lag (and the clock skew
   * margin) unless this process alone saw the latest contact: on the
   * embedded store, when its own contact is at least as new as the stored one.
   */
  async sweep(): Promise<number> {
    const now = this.now();
    const late: Collector[] = [];
    // One pass over the view every 5 s, in slices; nothing is copied for the many that are not late.
    await this.collectors.walk((c) => {
      if ((c.status !== "online" && c.status !== "degraded") || c.health === null || c.lastSeen === null) return;
      const window = OFFLINE_AFTER_INTERVALS * c.health.intervalSeconds * 1000;
      const local = this.contacts.get(c.id) ?? Number.NEGATIVE_INFINITY;
      if (this.solo && now - local <= window) return;
      const stored = Date.parse(c.lastSeen);
      if (this.solo && local >= stored) {
        if (now - local > window) late.push(c);
        return;
      }
      const lag = LAST_SEEN_RESOLUTION_MS + (this.solo ? 0 : CLOCK_SKEW_MARGIN_MS);
      if (now - Math.max(local, stored) > window + lag) late.push(c);
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

  /** One tick of the periodic job: sweeps when this replica holds the `presence` lease; null when another does. */
  async tick(): Promise<number | null> {
    if (!(await this.lease.acquire())) return null;
    return this.sweep();
  }

  start(): void {
    this.sweeper ??= setInterval(() => {
      this.ticking = this.ticking
        .then(() => this.tick())
        .then(
          () => {},
          (error) => this.log.warn({ err: error }, "offline sweep failed"),
        );
    }, SWEEP_INTERVAL_MS);
  }

  async stop(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
    await this.ticking;
    await this.lease.release().catch((error) => this.log.warn({ err: error }, "releasing the presence lease failed"));
    await this.writes.close();
  }
}
