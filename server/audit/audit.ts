/**
 * Audit entries. Domain code builds one for every state change that matters
 * and hands it to Store.write with the change itself, so the two land together.
 */
import type { AuditEntry, AuditOutcome } from "../store/store.ts";

/** Who is acting, as the audit log names them. */
export interface Actor {
  /** `sa:<name>` for a service account, `user:<username>` for a UI user, `anonymous` for a failed login, `system` for the server itself. */
  actor: string;
  remoteAddr: string | null;
}

export const SYSTEM_ACTOR: Actor = { actor: "system", remoteAddr: null };

export function auditEntry(
  who: Actor,
  action: string,
  resource: string,
  resourceId: string | null,
  details: Record<string, unknown> = {},
  outcome: AuditOutcome = "success",
  now: Date = new Date(),
): AuditEntry {
  return {
    id: Bun.randomUUIDv7("hex", now),
    time: now.toISOString(),
    actor: who.actor,
    action,
    resource,
    resourceId,
    outcome,
    details,
    remoteAddr: who.remoteAddr,
  };
}
