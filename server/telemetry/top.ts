/**
 * Fleet-wide figures from the throughput window for the dashboard: the top
 * collectors by records/s and by errors/s, and the fleet's records/s now and
 * over the last hour as one series. Built
 * only on the window's public `rates()`, offered one collector at a time by
 * the caller's single pass over the fleet, and keeping only the top `n`, so a
 * dashboard over 100,000 collectors holds a handful of entries, not a sort.
 */
import { STEP_MS } from "./history.ts";
import type { CollectorRates, ThroughputWindow } from "./window.ts";

export interface RankedCollector {
  id: string;
  name: string;
  rate: number;
}

/**
 * One collector's totals: records/s received (what its receivers took in or
 * refused: the load it is given) and errors/s over every component.
 */
export function collectorTotals(rates: CollectorRates): { records: number; errors: number } {
  let records = 0;
  let errors = 0;
  for (const c of rates.components) {
    if (c.kind === "receiver") records += c.in ?? 0;
    errors += c.errors ?? 0;
  }
  return { records, errors };
}

/** The `n` highest, highest first; ties keep the order offered. */
class TopN {
  readonly items: RankedCollector[] = [];
  constructor(private readonly n: number) {}

  offer(item: RankedCollector): void {
    if (this.items.length === this.n && item.rate <= this.items[this.n - 1]!.rate) return;
    let i = this.items.length;
    while (i > 0 && this.items[i - 1]!.rate < item.rate) i--;
    this.items.splice(i, 0, item);
    if (this.items.length > this.n) this.items.pop();
  }
}

/**
 * The fleet's figures. Only collectors that reported inside the window and
 * that svc does not see offline are counted (a collector gone minutes ago
 * keeps its last rates in the window, but they are not "now"). The fleet's
 * records/s now is the newest point of the same series the chart draws
 * (window.ts `fleetHistory`): the newest 15 s bucket that every counted
 * collector's pushes have covered, so a slower pusher is not missing from it.
 */
export class FleetThroughput {
  private readonly byRecords: TopN;
  private readonly byErrors: TopN;
  private reporting = 0;
  /** The oldest last report among the counted collectors (server clock, ms). */
  private settled = Infinity;
  private readonly now: number;

  constructor(
    private readonly window: ThroughputWindow,
    n: number,
  ) {
    this.byRecords = new TopN(n);
    this.byErrors = new TopN(n);
    this.now = window.now();
  }

  /** Counts one collector in; one without rates in the window, silent for longer than it, or offline, is skipped. */
  offer(id: string, name: string, offline = false): void {
    if (offline) return;
    const rates = this.window.rates(id);
    if (!rates || rates.window === 0 || rates.lastReportAt === null) return;
    const reportedAt = Date.parse(rates.lastReportAt);
    if (reportedAt < this.now - this.window.windowMs) return;
    const { records, errors } = collectorTotals(rates);
    this.reporting++;
    this.settled = Math.min(this.settled, reportedAt);
    this.byRecords.offer({ id, name, rate: records });
    if (errors > 0) this.byErrors.offer({ id, name, rate: errors });
  }

  result(): {
    reporting: number;
    byRecords: RankedCollector[];
    byErrors: RankedCollector[];
    current: number | null;
    /** Collectors measured in the bucket `current` is (a collector gone since may still be in it). */
    currentCollectors: number | null;
    history: { time: number; value: number; collectors: number }[];
  } {
    const history = this.window.fleetHistory(Math.min(this.settled, this.now));
    const newest = history.at(-1);
    // The series' newest bucket, when it is the one every counted collector covered.
    const settledEnd = Math.floor(this.settled / STEP_MS) * STEP_MS;
    const settledPoint = this.reporting > 0 && newest?.time === settledEnd ? newest : null;
    return {
      reporting: this.reporting,
      byRecords: this.byRecords.items,
      byErrors: this.byErrors.items,
      current: settledPoint?.value ?? null,
      currentCollectors: settledPoint?.collectors ?? null,
      history,
    };
  }
}
