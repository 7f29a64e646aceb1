/**
 * Drives staged rollouts forward (staged.ts `advance`): when any target
 * changes (a collector applied or failed its config), when a batch's pause
 * is due, and once a second for what no target change tells (a collector
 * going offline, another replica resuming a rollout). Every replica runs one;
 * the rollout's versioned writes let one step win.
 */
import type { Logger } from "pino";
import type { Delivery } from "./delivery.ts";
import type { StagedRollouts } from "./staged.ts";

/** Steps taken in one go at most: a step that meets another replica's answers "look again now". */
const STEPS_PER_RUN = 8;
const TICK_MS = 1000;

export class Stager {
  private running = false;
  private again = false;
  private tick: ReturnType<typeof setInterval> | undefined;
  private due: ReturnType<typeof setTimeout> | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly staged: Pick<StagedRollouts, "advance">,
    private readonly delivery: Pick<Delivery, "onTargetChanged">,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.unsubscribe = this.delivery.onTargetChanged(() => this.soon());
    this.tick = setInterval(() => this.soon(), TICK_MS);
    this.soon();
  }

  stop(): void {
    this.unsubscribe?.();
    clearInterval(this.tick);
    clearTimeout(this.due);
    this.tick = undefined;
  }

  /** Runs the steps now, or right after the run in progress. */
  soon(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    void this.run()
      .catch((err) => this.log.error({ err }, "rollout: a staged rollout step failed; the next tick tries again"))
      .finally(() => {
        this.running = false;
        if (this.again && this.tick !== undefined) {
          this.again = false;
          this.soon();
        }
      });
  }

  private async run(): Promise<void> {
    for (let step = 0; step < STEPS_PER_RUN; step++) {
      const at = await this.staged.advance();
      if (at === null) return;
      const wait = at - Date.now();
      if (wait > 0) {
        clearTimeout(this.due);
        this.due = setTimeout(() => this.soon(), wait);
        return;
      }
    }
  }
}
