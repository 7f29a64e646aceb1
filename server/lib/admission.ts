/**
 * Admits at most `running` tasks at once and queues at most `waiting` more,
 * first come first served; past that a task is refused at once with the
 * error `refuse` builds, so a flood is answered rather than stacked up.
 */
export class Admission {
  private running = 0;
  private readonly waiters: (() => void)[] = [];

  constructor(
    private readonly limits: { running: number; waiting: number },
    private readonly refuse: (busy: number) => Error,
  ) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running >= this.limits.running) {
      if (this.waiters.length >= this.limits.waiting) throw this.refuse(this.running + this.waiters.length);
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    } else {
      this.running++;
    }
    try {
      return await work();
    } finally {
      // The slot passes straight to the next waiter, so a newcomer cannot jump the queue.
      const next = this.waiters.shift();
      if (next) next();
      else this.running--;
    }
  }
}
