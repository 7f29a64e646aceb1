/**
 * Stalled collectors, from their own metrics: a collector that is connected,
 * whose receivers were seen accepting records, and whose reports of those
 * counters have since shown none accepted for `stalledMs`. Measured, not
 * guessed: a collector whose pushes stop says nothing about its records, so
 * it is not stalled (its control channel tells whether it is offline).
 *
 * Each stall is announced once; it re-arms when the counters grow again.
 * In memory and per replica, like the window it reads: a replica judges the
 * pushes it received. With a load balancer spreading one collector's pushes
 * over several replicas, each sees the stall at its own time, so the stall's
 * key (Webhooks.emit dedupes by it) is not a replica's clock but the values
 * the cumulative accepted counters stopped at, with their start times: the
 * same on every replica once they are flat, and new after any growth or
 * restart. A delta counter carries no such shared value; a stall of one is
 * keyed by this replica's acceptedAt, so behind such a balancer it can be
 * announced once per replica.
 */
import type { CollectorWindow, ThroughputWindow } from "./window.ts";

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
      stalls.push({ collectorId, lastAcceptedAt: new Date(w.acceptedAt).toISOString(), key: `${collectorId}/${this.flatAt(w)}` });
    }
    // Collectors the window let go of are forgotten here too.
    for (const id of this.announced.keys()) if (!seen.has(id)) this.announced.delete(id);
    return stalls;
  }

  /** The stall's identity from what every replica sees alike: each accepted counter reported lately, at its start time and value. */
  private flatAt(w: CollectorWindow): string {
    const marks: string[] = [];
    for (const [key, s] of w.series) {
      if (s.meaning.kind !== "receiver" || s.meaning.field !== "inout" || s.temporality === "gauge") continue;
      if (s.newestTime() < w.newest - this.window.windowMs) continue; // no longer reported (a receiver configured away)
      marks.push(s.temporality === "cumulative" ? `${key}@${s.lastStart}=${s.lastRaw}` : `${key}@delta:${w.acceptedAt}`);
    }
    return marks.sort().join(";");
  }
}
