/**
 * Stalled collectors, from their own metrics: a collector that is connected,
 * whose receivers were seen accepting records, and whose reports of those
 * counters have since shown none accepted for `stalledMs`. Measured, not
 * guessed: a collector whose pushes stop says nothing about its records, so
 * it is not stalled (its control channel tells whether it is offline).
 *
 * Each stall is announced once; it re-arms when the counters grow again.
 * In memory and per replica, like the window it reads: a replica judges the
 * pushes it received.
 */
import type { ThroughputWindow } from "./window.ts";

export interface Stall {
  collectorId: string;
  /** When the collector was last seen accepting records (server clock, ISO). */
  lastAcceptedAt: string;
  /** The stall's identity: the same on every sweep until traffic returns. */
  key: string;
}

export class StallDetector {
  /** Per collector, the acceptedAt of the stall already announced. */
  private readonly announced = new Map<string, number>();

  constructor(
    private readonly window: ThroughputWindow,
    readonly stalledMs: number,
  ) {}

  /** Collectors newly stalled since the last sweep; `connected` says whether one is online (or degraded) now. */
  sweep(connected: (collectorId: string) => boolean): Stall[] {
    const stalls: Stall[] = [];
    const seen = new Set<string>();
    for (const [collectorId, w] of this.window.entries()) {
      seen.add(collectorId);
      if (w.acceptedAt === 0 || w.acceptedReportedAt - w.acceptedAt < this.stalledMs) continue;
      if (this.announced.get(collectorId) === w.acceptedAt || !connected(collectorId)) continue;
      this.announced.set(collectorId, w.acceptedAt);
      stalls.push({ collectorId, lastAcceptedAt: new Date(w.acceptedAt).toISOString(), key: `${collectorId}/${w.acceptedAt}` });
    }
    // Collectors the window let go of are forgotten here too.
    for (const id of this.announced.keys()) if (!seen.has(id)) this.announced.delete(id);
    return stalls;
  }
}
