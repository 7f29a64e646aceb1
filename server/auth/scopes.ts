/**
 * Scopes are `<resource>:<action>`; roles are named sets of them. A route
 * declares the one scope it needs; a credential carries a set.
 */
import { SCOPES, type Role, type Scope } from "../../shared/access.ts";

// The list is declared with the roles in shared/, where the UI reads it too.
export { SCOPES, type Scope };

const READ_SCOPES: Scope[] = SCOPES.filter((s) => s.endsWith(":read"));

export const ROLES = {
  admin: [...SCOPES],
  editor: SCOPES.filter((s) => s !== "users:admin" && s !== "agents:browse" && s !== "sources:hostpaths"),
  viewer: READ_SCOPES,
} satisfies Record<Role, Scope[]>;

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/**
 * The first of `wanted` that `held` lacks, or undefined. A caller grants only
 * scopes it holds, and acts only on holders of scopes it holds (roles, invites,
 * resets, disable, delete): otherwise `users:admin` alone reaches every scope.
 */
export function missingScope(held: ReadonlySet<Scope>, wanted: Iterable<Scope>): Scope | undefined {
  for (const scope of wanted) if (!held.has(scope)) return scope;
  return undefined;
}
