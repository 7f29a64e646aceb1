/**
 * Bounds argon2 work. One password check takes ~100+ ms of a core; a flood
 * of log-ins hashing without bound took every core and held /healthz for
 * tens of seconds. At most `slots` checks run at once and `queue` more wait;
 * past that a caller is told at once to retry (503 overloaded, Retry-After),
 * so the rest of the server keeps a core.
 */
import { availableParallelism } from "node:os";
import { UnavailableError } from "../errors.ts";
import { Admission } from "../lib/admission.ts";

export class PasswordGate extends Admission {
  constructor(
    readonly slots = Math.max(1, availableParallelism() - 1),
    readonly queue = 4 * slots,
  ) {
    super(
      { running: slots, waiting: queue },
      () => new UnavailableError("The server is checking as many passwords as it can at once; retry shortly.", 1, "overloaded"),
    );
  }
}
