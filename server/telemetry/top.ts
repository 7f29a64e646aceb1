/**
 * Fleet-wide figures from the throughput window for the dashboard: the top
 * collectors by records/s and by errors/s, and the sum of records/s. Built
 * only on the window's public `rates()`, offered one collector at a time by
 * the caller's single pass over the fleet, and keeping only the top `n`, so a
 * dashboard over 100,000 collectors holds a handful of entries, not a sort.
 */
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

export class FleetThroughput {
  private readonly byRecords: TopN;
  private readonly byErrors: TopN;
  private sum = 0;
  private reporting = 0;

  constructor(
    private readonly window: ThroughputWindow,
    n: number,
  ) {
    this.byRecords = new TopN(n);
    this.byErrors = new TopN(n);
  }

  /** Counts one collector in; one without rates in the window is skipped. */
  offer(id: string, name: string): void {
    const rates = this.window.rates(id);
    if (!rates || rates.window === 0) return;
    const { records, errors } = collectorTotals(rates);
    this.reporting++;
    this.sum += records;
    this.byRecords.offer({ id, name, rate: records });
    if (errors > 0) this.byErrors.offer({ id, name, rate: errors });
  }

  result(): { reporting: number; byRecords: RankedCollector[]; byErrors: RankedCollector[]; current: number | null } {
    return {
      reporting: this.reporting,
      byRecords: this.byRecords.items,
      byErrors: this.byErrors.items,
      current: this.reporting === 0 ? null : this.sum,
    };
  }
}
