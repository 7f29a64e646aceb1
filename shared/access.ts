/**
 * The scopes a credential can hold and the roles of web UI accounts, with the
 * scopes each role grants (server/auth/scopes.ts checks them). Without TypeBox on purpose:
 * the UI imports this at run time (its role and scope pickers), and its bundle
 * must not carry the schema library.
 */
export const SCOPES = [
  "collectors:read",
  "collectors:write",
  /**
   * Minting a collector's credential (its own token, an opamp enrollment token, a snippet or
   * bootstrap files that carry one): whoever holds it can act as that collector and read its
   * config with every secret filled in, so only roles trusted with secrets hold it (admin).
   */
  "collectors:enroll",
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

export const USER_ROLES = ["admin", "editor", "viewer"] as const;
export type Role = (typeof USER_ROLES)[number];

/** Scopes only admins hold: editors never read secrets (the API masks them), so they cannot mint what reveals them either. */
const ADMIN_ONLY: readonly Scope[] = ["users:admin", "agents:browse", "sources:hostpaths", "collectors:enroll"];

/** Each role's scopes; here rather than in server/auth so the UI can tell which actions a role may take. */
export const ROLES = {
  admin: [...SCOPES],
  editor: SCOPES.filter((s) => !ADMIN_ONLY.includes(s)),
  viewer: SCOPES.filter((s) => s.endsWith(":read")),
} satisfies Record<Role, Scope[]>;
