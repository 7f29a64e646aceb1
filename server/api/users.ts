/**
 * REST: /users — web UI accounts (admin, editor, viewer). Invites and password
 * resets answer with a single-use link built from externalUrl; the admin hands
 * it over (no mail is sent by this version).
 */
import { Type } from "@sinclair/typebox";
import type { App } from "../app.ts";
import { USER_ROLES, USERNAME_PATTERN } from "../auth/users.ts";
import { ConflictError } from "../errors.ts";
import { route, type Route } from "../http/route.ts";

export const Role = Type.Union(USER_ROLES.map((r) => Type.Literal(r)), { errorMessage: `must be one of ${USER_ROLES.join(", ")}` });

export const User = Type.Object(
  {
    id: Type.String(),
    username: Type.String(),
    email: Type.String(),
    role: Role,
    createdAt: Type.String({ format: "date-time" }),
    createdBy: Type.String(),
    disabledAt: Type.Union([Type.String({ format: "date-time" }), Type.Null()]),
  },
  { title: "User" },
);

const Email = Type.String({ maxLength: 254, pattern: "^[^\\s@]+@[^\\s@]+$", errorMessage: "must be an e-mail address" });

const CreateBody = Type.Object(
  {
    username: Type.String({ pattern: "^[A-Za-z0-9._-]{1,64}$", errorMessage: "must be 1–64 of a-z, 0-9, '.', '_' or '-' (stored lower-case)" }),
    email: Email,
    role: Role,
  },
  { additionalProperties: false },
);

const PatchBody = Type.Object(
  {
    role: Type.Optional(Role),
    email: Type.Optional(Email),
    disabled: Type.Optional(Type.Boolean({ description: "true disables the user and ends their sessions at once; false enables." })),
  },
  { additionalProperties: false },
);

/** `{externalUrl}{path}?token=…`, or 409 external_url_missing when no public URL is configured. */
export function uiLink(externalUrl: string, path: string, token: string): string {
  if (externalUrl === "") {
    throw new ConflictError(
      "Links for the web UI need this server's public URL, and none is configured: set externalUrl in config.yaml (or SVC_EXTERNALURL / EXTERNAL_URL) and restart.",
      "external_url_missing",
    );
  }
  const url = new URL(path, externalUrl.endsWith("/") ? externalUrl : externalUrl + "/");
  url.searchParams.set("token", token);
  return url.toString();
}

export function userRoutes(app: App): Route[] {
  const { users, config } = app;
  return [
    route({
      method: "GET",
      path: "/users",
      scope: "users:admin",
      tag: "users",
      summary: "List web UI users (never their passwords).",
      response: Type.Object({ items: Type.Array(User) }),
      handler: async () => ({ items: await users.list() }),
    }),
    route({
      method: "POST",
      path: "/users",
      scope: "users:admin",
      tag: "users",
      summary: "Invite a user: answers the user and an invite link (single use, 7 days) to hand over; the user sets a password through it. 409 external_url_missing without externalUrl.",
      body: CreateBody,
      response: Type.Object({ user: User, inviteUrl: Type.String(), inviteExpiresAt: Type.String({ format: "date-time" }) }),
      status: 201,
      handler: async ({ body, principal }) => {
        uiLink(config.externalUrl, "ui/invite", "-");
        const { user, invite } = await users.create(principal, body);
        return { user, inviteUrl: uiLink(config.externalUrl, "ui/invite", invite!.token), inviteExpiresAt: invite!.expiresAt };
      },
    }),
    route({
      method: "GET",
      path: "/users/{id}",
      scope: "users:admin",
      tag: "users",
      summary: "One user.",
      response: User,
      handler: ({ params }) => users.get(params.id!),
    }),
    route({
      method: "PATCH",
      path: "/users/{id}",
      scope: "users:admin",
      tag: "users",
      summary: "Change a user's role or e-mail, or disable (ends their sessions at once) or enable them. The last enabled admin cannot be demoted or disabled (409 last_admin).",
      body: PatchBody,
      response: User,
      handler: ({ params, body, principal }) => users.update(principal, params.id!, body),
    }),
    route({
      method: "DELETE",
      path: "/users/{id}",
      scope: "users:admin",
      tag: "users",
      summary: "Delete a user and end their sessions. The last enabled admin cannot be deleted (409 last_admin).",
      status: 204,
      handler: ({ params, principal }) => users.delete(principal, params.id!),
    }),
    route({
      method: "POST",
      path: "/users/{id}/password-reset",
      scope: "users:admin",
      tag: "users",
      summary: "Mint a password-reset link (single use, 1 hour; replaces any earlier link) to hand to the user. 409 external_url_missing without externalUrl.",
      response: Type.Object({ resetUrl: Type.String(), expiresAt: Type.String({ format: "date-time" }) }),
      status: 201,
      handler: async ({ params, principal }) => {
        uiLink(config.externalUrl, "ui/reset-password", "-");
        const link = await users.mintReset(principal, params.id!);
        return { resetUrl: uiLink(config.externalUrl, "ui/reset-password", link.token), expiresAt: link.expiresAt };
      },
    }),
  ];
}
