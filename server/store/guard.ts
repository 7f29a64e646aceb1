/** The compare-and-swap guard every adapter checks a write operation against (store.ts WriteOp `expect`). */
import { ConflictError } from "../errors.ts";
import type { WriteOp } from "./store.ts";

/**
 * Throws ConflictError("version_conflict") when `op.expect` does not hold for
 * the current version (null = absent). The message may reach an API answer
 * when the domain does not retry, so it names no stored document (a
 * collection and id are internal); the domain says which record it was.
 */
export function checkGuard(op: Pick<WriteOp, "expect">, current: number | null): void {
  const expect = op.expect;
  if (expect === undefined) return;
  const ok = expect === "absent" ? current === null : expect === "present" ? current !== null : current === expect;
  if (!ok) {
    throw new ConflictError(
      "A record this change depends on was changed meanwhile by another write, so nothing of this change was stored. Read it again and retry.",
      "version_conflict",
    );
  }
}
