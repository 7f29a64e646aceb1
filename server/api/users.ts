/**
 * REST: /users — web UI accounts (admin, editor, viewer). Invites and password
 * resets make a single-use link built from externalUrl. With SMTP configured
 * the link is mailed to the user and never answered (only the user should
 * hold it); without, the answer carries it for the admin to hand over.
 */
import { Type } from "@sinclair/typebox";
import type { Mail, Mailer } from "../mail/mailer.ts";
import type { ServerConfig } from "../config/load.ts";
import type { LinkDelivery, Users } from "../auth/users.ts";
import { ConflictError } from "../errors.ts";
import { route, type Route } from "../http/route.ts";
import { inviteMail, resetMail } from "../mail/messages.ts";
import { InviteAnswerSchema, ResetAnswerSchema, RoleSchema as Role, UserListSchema, UserSchema as User } from "../../shared/users.ts";

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

type MailFor = (to: string, username: string, url: string, expiresAt: string) => Mail;

/** What the /users routes use. */
export interface UsersApiDeps {
  users: Users;
  config: ServerConfig;
  mailer: Mailer | null;
}

/** Mails the link to the user when a mailer is configured and the user has an address; undefined otherwise. */
function mailDelivery(deps: UsersApiDeps, path: string, mailFor: MailFor, email: string): LinkDelivery | undefined {
  const { mailer, config } = deps;
  if (!mailer || email === "") return undefined;
  return (link, user) => mailer.send(mailFor(user.email, user.username, uiLink(config.externalUrl, path, link.token), link.expiresAt));
}

export function userRoutes(deps: UsersApiDeps): Route[] {
  const { users, config } = deps;
  return [
    route({
      method: "GET",
      path: "/users",
      scope: "users:admin",
      tag: "users",
      summary: "List web UI users (never their passwords).",
      response: UserListSchema,
      handler: async () => ({ items: await users.list() }),
    }),
    route({
      method: "POST",
      path: "/users",
      scope: "users:admin",
      tag: "users",
      summary:
        "Invite a user with an invite link (single use, 7 days) through which they set a password. The caller must hold every scope of the role (403 forbidden otherwise). With SMTP configured the link is mailed (mailedTo) and not answered; otherwise inviteUrl is answered to hand over. 409 external_url_missing without externalUrl; 502 mail_failed (nothing created) when the mail server refuses.",
      body: CreateBody,
      response: InviteAnswerSchema,
      status: 201,
      handler: async ({ body, principal }) => {
        uiLink(config.externalUrl, "ui/invite", "-");
        const deliver = mailDelivery(deps, "ui/invite", inviteMail, body.email);
        const { user, invite } = await users.create(principal, body, undefined, [], deliver);
        const sent = deliver ? { mailedTo: user.email } : { inviteUrl: uiLink(config.externalUrl, "ui/invite", invite!.token) };
        return { user, ...sent, inviteExpiresAt: invite!.expiresAt };
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
      summary:
        "Change a user's role or e-mail, or disable (ends their sessions at once) or enable them. The caller must hold every scope of both the user's role and the new one (403 forbidden). The last enabled admin cannot be demoted or disabled (409 last_admin).",
      body: PatchBody,
      response: User,
      handler: ({ params, body, principal }) => users.update(principal, params.id!, body),
    }),
    route({
      method: "DELETE",
      path: "/users/{id}",
      scope: "users:admin",
      tag: "users",
      summary:
        "Delete a user and end their sessions; the caller must hold every scope of the user's role (403 forbidden). The last enabled admin cannot be deleted (409 last_admin).",
      status: 204,
      handler: ({ params, principal }) => users.delete(principal, params.id!),
    }),
    route({
      method: "POST",
      path: "/users/{id}/password-reset",
      scope: "users:admin",
      tag: "users",
      summary:
        "Mint a password-reset link (single use, 1 hour; replaces any earlier link); the caller must hold every scope of the user's role (403 forbidden). With SMTP configured and an e-mail address on the user it is mailed (mailedTo) and not answered; otherwise resetUrl is answered to hand over. 409 external_url_missing without externalUrl; 502 mail_failed (the earlier link stays) when the mail server refuses.",
      response: ResetAnswerSchema,
      status: 201,
      handler: async ({ params, principal }) => {
        uiLink(config.externalUrl, "ui/reset-password", "-");
        const { email } = await users.get(params.id!);
        const deliver = mailDelivery(deps, "ui/reset-password", resetMail, email);
        const link = await users.mintReset(principal, params.id!, deliver);
        const sent = deliver ? { mailedTo: email } : { resetUrl: uiLink(config.externalUrl, "ui/reset-password", link.token) };
        return { ...sent, expiresAt: link.expiresAt };
      },
    }),
  ];
}
