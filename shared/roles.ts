/**
 * The roles of web UI accounts; server/auth/scopes.ts grants each its scopes.
 * Without TypeBox on purpose: the UI imports this at run time (its role picker),
 * and its bundle must not carry the schema library.
 */
export const USER_ROLES = ["admin", "editor", "viewer"] as const;
export type Role = (typeof USER_ROLES)[number];
