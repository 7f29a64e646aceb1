/**
 * Every collector's target and render failure in memory, kept current by the
 * store's change feed (store/view.ts: a write of this replica comes with its
 * document, another replica's is read, and everything is read again after a
 * resync). What the dashboard reads on every refresh (Attention, a rollout's
 * status) is answered from here: a refresh at fleet scale lists nothing from
 * the store. Decisions that must see every replica's last write (a rollout's
 * end, a batch release) read the store instead; a rollout's end only once
 * this index says it may have come. Beside the views, the attention lists are
 * kept as sets (attention-sets.ts), so a refresh reads them, not every target.
 */
import type { Store } from "../store/store.ts";
import { RecordView, type ViewListener } from "../store/view.ts";
import { AttentionSets } from "./attention-sets.ts";
import { CONFIGS, RENDER_FAILURES, type CollectorConfig, type RenderFailure } from "./records.ts";

export class TargetIndex {
  private readonly targets: RecordView<CollectorConfig>;
  private readonly failures: RecordView<RenderFailure>;
  private readonly sets = new AttentionSets();

  constructor(store: Store) {
    this.targets = new RecordView(store, CONFIGS, [this.sets.targets]);
    this.failures = new RecordView(store, RENDER_FAILURES, [this.sets.failures]);
  }

  /** Loaded (once; again after a resync). */
  async ready(): Promise<void> {
    await Promise.all([this.targets.ready(), this.failures.ready()]);
  }

  /**
   * Once loaded and every change announced so far is in (another replica's
   * writes are read after their announcement): what a decision may take as a
   * first look before it reads the store.
   */
  async currentLookup(): Promise<(collectorId: string) => CollectorConfig | undefined> {
    await Promise.all([this.targets.current(), this.failures.current()]);
    return (collectorId) => this.targets.get(collectorId);
  }

  /** Once loaded: each collector's target by its id, undefined when it has none. */
  async targetLookup(): Promise<(collectorId: string) => CollectorConfig | undefined> {
    await this.ready();
    return (collectorId) => this.targets.get(collectorId);
  }

  /** Once loaded: a collector's render failure by its id, undefined when it has none. */
  async failureOf(): Promise<(collectorId: string) => RenderFailure | undefined> {
    await this.ready();
    return (collectorId) => this.failures.get(collectorId);
  }

  /** Once loaded: the failed, pinned, drifted and unrenderable ids, kept current with the views (attention-sets.ts). */
  async attentionSets(): Promise<AttentionSets> {
    await this.ready();
    return this.sets;
  }

  /** Tells `listener` of every target the index takes or drops from now on. Returns the unsubscribe. */
  listen(listener: ViewListener<CollectorConfig>): () => void {
    return this.targets.listen(listener);
  }

  close(): void {
    this.targets.close();
    this.failures.close();
  }
}
