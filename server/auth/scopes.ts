/**
 * Scopes are `<resource>:<action>`; roles are named sets of them. A route
 * declares the one scope it needs; a credential carries a set.
 */
import { ROLES, SCOPES, type Scope } from "../../shared/access.ts";

// The list and the roles are declared in shared/, where the UI reads them too.
export { ROLES, SCOPES, type Scope };

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
