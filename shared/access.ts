/**
 * The scopes a credential can hold and the roles of web UI accounts;
 * server/auth/scopes.ts grants each role its scopes. Without TypeBox on purpose:
 * the UI imports this at run time (its role and scope pickers), and its bundle
 * must not carry the schema library.
 */
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

export const USER_ROLES = ["admin", "editor", "viewer"] as const;
export type Role = (typeof USER_ROLES)[number];
