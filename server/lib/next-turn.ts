/** Lets the event loop run what is waiting (requests, deliveries) before a long loop goes on. */
export const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Longest a walk of the fleet (a scan of a view, an index answer, a tally's build) holds the event loop at a time. */
export const SCAN_SLICE_MS = 8;

/** A pass used up its budget of event-loop time (`Slices`) and was stopped. */
export class ScanBudgetError extends Error {
  constructor(readonly budgetMs: number) {
    super(`the scan took more than ${budgetMs} ms`);
    this.name = "ScanBudgetError";
  }
}

/**
 * The clock of a long pass that gives the event loop a turn after each `sliceMs` of its own work, so
 * requests and deliveries wait at most a slice behind it. Between steps the pass asks `due`, and only
 * then awaits `turn()`: a step within the slice costs a clock read, not a promise. A pass given a
 * `budgetMs` (one a caller can make arbitrarily long) is stopped with ScanBudgetError once its slices
 * add up to more.
 */
export class Slices {
  private start = performance.now();
  private spent = 0;

  constructor(
    private readonly sliceMs: number,
    private readonly budgetMs = Number.POSITIVE_INFINITY,
  ) {}

  /** Whether this slice is used up. */
  get due(): boolean {
    return performance.now() - this.start > this.sliceMs;
  }

  /** Gives the event loop a turn and starts the next slice; throws ScanBudgetError instead once the budget is spent. */
  async turn(): Promise<void> {
    this.spent += performance.now() - this.start;
    if (this.spent > this.budgetMs) throw new ScanBudgetError(this.budgetMs);
    await nextTurn();
    this.start = performance.now();
  }
}
