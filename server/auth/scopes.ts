/**
 * Scopes are `<resource>:<action>`; roles are named sets of them. A route
 * declares the one scope it needs; a credential carries a set.
 */
import type { Role } from "../../shared/roles.ts";

export const SCOPES = [
  "collectors:read",
  "collectors:write",
  "config:read",
  "config:write",
  "config:commit",
  "config:publish",
  "tokens:read",
  "tokens:write",
  "agents:read",
  "agents:write",
  "agents:browse",
  /** Sources that read host paths outside sources.hostPaths (server/catalog/hostpaths.ts): admin only. */
  "sources:hostpaths",
  "health:read",
  "audit:read",
  "users:admin",
] as const;

export type Scope = (typeof SCOPES)[number];

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
