/**
 * What only the server does with sensitive values (their forms are in
 * shared/sensitive.ts): the read form of a stored secret, and the markers a
 * redacted rendering carries in place of secrets until delivery puts the
 * plaintexts in.
 */
import type { SecretRef, SecretSummary } from "../../shared/sensitive.ts";

/** When a sealed version was set: the millisecond time inside its UUIDv7 id. */
export function secretUpdatedAt(id: string): string {
  return new Date(parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).toISOString();
}

export function secretSummary(ref: SecretRef): SecretSummary {
  return { secret: true, set: true, updatedAt: secretUpdatedAt(ref.secret) };
}

/**
 * The text a redacted rendering carries in place of a secret. It is a whole
 * string value in either runtime's output, and quoting leaves it as it is, so
 * delivery finds it as `"<secret:<id>>"` and puts the runtime's quoting of
 * the plaintext there. No string an operator writes may contain its prefix
 * (the catalog refuses it), so nothing but a sensitive field ever becomes one.
 */
export const MARKER_PREFIX = "<secret:";

export function secretMarker(id: string): string {
  return `${MARKER_PREFIX}${id}>`;
}

/** Every quoted marker in a rendered config, with the id it names. */
export const QUOTED_MARKER = /"<secret:([0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12})>"/g;

/** The ids of the secrets a rendered config carries as markers, each once. */
export function markedSecrets(body: string): string[] {
  return [...new Set([...body.matchAll(QUOTED_MARKER)].map((m) => m[1]!))];
}
