/**
 * The dashboard's collector figures kept current as the collectors view
 * changes (a ViewListener beside it, as attribute-index.ts is): counts by
 * status and by management mode, and the ids of the offline and the
 * reporting-only collectors in id order. The view hears this replica's
 * writes, another replica's (read after the feed announces them), removals
 * and a resync's reload, so these follow every one of them; a dashboard
 * refresh then reads a few numbers and the first few ids instead of walking
 * 100,000 records (issue 36 item 3).
 */
import { reportingOnly } from "../../shared/attention.ts";
import { COLLECTOR_STATUSES, type CollectorStatus } from "../../shared/collector-status.ts";
import type { Collector } from "../../shared/collectors.ts";
import { MANAGEMENT_MODES, type ManagementMode } from "../../shared/vocabulary.ts";
import { SortedIds } from "../lib/sorted-ids.ts";
import type { ViewListener } from "../store/view.ts";

/** What one collector was counted under, so its next version (or removal) takes it back out. */
interface Counted {
  status: CollectorStatus;
  mode: ManagementMode;
}

const zeros = <K extends string>(keys: readonly K[]) => Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;

export class FleetCounts implements ViewListener<Collector> {
  private readonly counted = new Map<string, Counted>();
  private readonly byStatus = zeros<CollectorStatus>(COLLECTOR_STATUSES);
  private readonly byMode = zeros<ManagementMode>(MANAGEMENT_MODES);
  /** Offline collectors, in id order. */
  readonly offline = new SortedIds();
  /** Connected collectors that cannot take remote config (shared/attention.ts reportingOnly), in id order. */
  readonly reportingOnly = new SortedIds();

  put(collector: Collector): void {
    const before = this.counted.get(collector.id);
    const mode = collector.managementMode;
    if (before?.status !== collector.status || before.mode !== mode) {
      if (before) {
        this.byStatus[before.status]--;
        this.byMode[before.mode]--;
      }
      this.byStatus[collector.status]++;
      this.byMode[mode]++;
      this.counted.set(collector.id, { status: collector.status, mode });
    }
    this.offline.set(collector.id, collector.status === "offline");
    this.reportingOnly.set(collector.id, reportingOnly(collector));
  }

  remove(id: string): void {
    const before = this.counted.get(id);
    if (!before) return;
    this.counted.delete(id);
    this.byStatus[before.status]--;
    this.byMode[before.mode]--;
    this.offline.delete(id);
    this.reportingOnly.delete(id);
  }

  /** The counts as the dashboard shows them (copies). */
  collectors(): { total: number; byStatus: Record<CollectorStatus, number>; byMode: Record<ManagementMode, number> } {
    return { total: this.counted.size, byStatus: { ...this.byStatus }, byMode: { ...this.byMode } };
  }
}
