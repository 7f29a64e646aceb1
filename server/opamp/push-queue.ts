/**
 * Pushes of new targets to connected sessions, one collector at a time.
 *
 * A fleet publish announces every changed collector in one change-feed call
 * (100,000 ids at bench/fleet.ts's scale). Starting a push per id at once made
 * every push miss the same rendered-config cache together (each read and parsed
 * the stored document: ~1 s of the 2.4 s the pushes took at 17,500 sessions) and ran them all as one chain
 * of microtasks, so no poll or API request was answered until the last one was
 * sent. Queued, each push finds what the one before it cached, and the event
 * loop is given back after each `sliceMs` of pushing. The slice is long on
 * purpose: each turn given back lets through everything that queued up
 * meanwhile (at 100,000 collectors, a backlog of polls): giving it back after
 * every 200 pushes stretched the delivery to 17,500 sessions from 6.7 s to 30 s,
 * every 100 ms to 12.8 s, every 500 ms 10.1 s (BENCHMARKS.md, "Fleet of
 * 100,000 collectors"). An id queued again before its turn
 * is pushed once; the push reads the target current at its turn. The push
 * handles its own failures (pushConfig logs them per session).
 */
import { Slices } from "../lib/next-turn.ts";

export class PushQueue {
  private readonly queued = new Set<string>();
  private draining = false;

  constructor(
    private readonly push: (collectorId: string) => Promise<void>,
    private readonly sliceMs = 500,
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
      const slices = new Slices(this.sliceMs);
      // One iterator for the whole drain: it goes on over ids added meanwhile, and a fresh one per id walked every
      // slot the ids before it had left (Bun's Set keeps them until it rehashes): 1.1 s to drain 100,000 ids.
      for (const id of this.queued) {
        this.queued.delete(id);
        await this.push(id);
        if (slices.due) await slices.turn();
      }
    } finally {
      this.draining = false;
    }
  }
}
