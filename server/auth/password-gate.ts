/**
 * Bounds argon2 work. One password check takes ~100+ ms of a core; a flood
 * of log-ins hashing without bound took every core and held /healthz for
 * tens of seconds. At most `slots` checks run at once and `queue` more wait;
 * past that a caller is told at once to retry (503 overloaded, Retry-After),
 * so the rest of the server keeps a core.
 */
import { availableParallelism } from "node:os";
import { UnavailableError } from "../errors.ts";

export class PasswordGate {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    readonly slots = Math.max(1, availableParallelism() - 1),
    readonly queue = 4 * slots,
  ) {}

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.running < this.slots) {
      this.running++;
    } else {
      if (this.waiting.length >= this.queue) {
        throw new UnavailableError("The server is checking as many passwords as it can at once; retry shortly.", 1, "overloaded");
      }
      // The finishing check hands its slot straight to the next waiter.
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
    try {
      return await work();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
