/**
 * The collectors whose config needs a look, as sets of ids in id order kept
 * current as the targets and render failures change (ViewListeners on the
 * target index's views, target-index.ts): failed, pinned, drifted (by the
 * target alone: attention.ts keeps only the ones online and current), and
 * unrenderable. Attention answers from these instead of filtering every
 * target on each dashboard refresh, which at 100,000 collectors held the
 * event loop for the whole walk (issue 36 item 3).
 */
import { SortedIds } from "../lib/sorted-ids.ts";
import type { ViewListener } from "../store/view.ts";
import type { CollectorConfig, RenderFailure } from "./records.ts";

export class AttentionSets {
  readonly failed = new SortedIds();
  readonly pinned = new SortedIds();
  /** Targets current with a drift check that says drifted; whether the collector counts as current is judged when read. */
  readonly drifted = new SortedIds();
  readonly unrenderable = new SortedIds();

  /** Hears the targets view. */
  readonly targets: ViewListener<CollectorConfig> = {
    put: (target) => {
      const id = target.collectorId;
      this.failed.set(id, target.state === "failed");
      this.pinned.set(id, Boolean(target.pinned));
      this.drifted.set(id, target.state === "current" && target.drift?.drifted === true);
    },
    remove: (id) => {
      this.failed.delete(id);
      this.pinned.delete(id);
      this.drifted.delete(id);
    },
  };

  /** Hears the render failures view. */
  readonly failures: ViewListener<RenderFailure> = {
    put: (failure) => this.unrenderable.add(failure.collectorId),
    remove: (id) => this.unrenderable.delete(id),
  };
}
