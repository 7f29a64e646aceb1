/**
 * Pushes of new targets to connected sessions, one collector at a time.
 *
 * A fleet publish announces every changed collector in one change-feed call
 * (100,000 ids at bench/fleet.ts's scale). Starting a push per id at once made
 * every push miss the same rendered-config cache together (each read and parsed
 * the stored document: ~2 s at 17,500 sessions) and ran them all as one chain
 * of microtasks, so no poll or API request was answered until the last one was
 * sent. Queued, each push finds what the one before it cached, and the event
 * loop is given back every `slice` pushes. An id queued again before its turn
 * is pushed once; the push reads the target current at its turn. The push
 * handles its own failures (pushConfig logs them per session).
 */
export class PushQueue {
  private readonly queued = new Set<string>();
  private draining = false;

  constructor(
    private readonly push: (collectorId: string) => Promise<void>,
    private readonly slice = 200,
  ) {}

  add(collectorId: string): void {
    this.queued.add(collectorId);
    if (!this.draining) {
      this.draining = true;
      void this.drain();
    }
  }

  /** Drops what is queued (the channel stops). */
  clear(): void {
    this.queued.clear();
  }

  get size(): number {
    return this.queued.size;
  }

  private async drain(): Promise<void> {
    try {
      for (let n = 1; this.queued.size > 0; n++) {
        const id: string = this.queued.values().next().value!;
        this.queued.delete(id);
        await this.push(id);
        if (n % this.slice === 0) await new Promise<void>((resolve) => setImmediate(resolve));
      }
    } finally {
      this.draining = false;
    }
  }
}
