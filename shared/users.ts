/**
 * Web UI accounts as the REST API answers them (/users, /session), declared once
 * for the routes, the OpenAPI document and the UI's session and Users page.
 */
import { Type, type Static, type TSchema } from "@sinclair/typebox";
import { USER_ROLES } from "./access.ts";

export const RoleSchema = Type.Union(
  USER_ROLES.map((r) => Type.Literal(r)),
  { errorMessage: `must be one of ${USER_ROLES.join(", ")}` },
);

export const UserSchema = Type.Object(
  {
    id: Type.String(),
    username: Type.String(),
    email: Type.String(),
    role: RoleSchema,
    createdAt: Type.String({ format: "date-time" }),
    createdBy: Type.String(),
    disabledAt: Type.Union([Type.String({ format: "date-time" }), Type.Null()]),
  },
  { title: "User" },
);
export type User = Static<typeof UserSchema>;

const MailedTo = Type.String({
  description: "Present when the link was mailed (SMTP configured): the address it went to. The link itself is then not in the answer.",
});

/** POST /users: the invited user and their invite link, or where it was mailed. */
export const InviteAnswerSchema = Type.Object({
  user: UserSchema,
  inviteUrl: Type.Optional(Type.String({ description: "Only when no mail was sent." })),
  mailedTo: Type.Optional(MailedTo),
  inviteExpiresAt: Type.String({ format: "date-time" }),
});
export type InviteAnswer = Static<typeof InviteAnswerSchema>;

/** POST /users/{id}/password-reset: the reset link, or where it was mailed. */
export const ResetAnswerSchema = Type.Object({
  resetUrl: Type.Optional(Type.String({ description: "Only when no mail was sent." })),
  mailedTo: Type.Optional(MailedTo),
  expiresAt: Type.String({ format: "date-time" }),
});
export type ResetAnswer = Static<typeof ResetAnswerSchema>;

export const SessionSchema = Type.Object(
  {
    user: UserSchema,
    csrfToken: Type.String({ description: "Send it as X-CSRF-Token on every call but GET and HEAD made with the session cookie." }),
    expiresAt: Type.Optional(Type.String({ format: "date-time", description: "The session's absolute end (it also ends after 12 hours idle)." })),
  },
  { title: "Session" },
);

export const SessionStatusSchema = Type.Object(
  {
    signedIn: Type.Boolean(),
    user: Type.Optional(UserSchema),
    csrfToken: Type.Optional(Type.String({ description: "With signedIn: as in the Session answer." })),
  },
  { title: "SessionStatus" },
);
export type Session = Static<typeof SessionSchema>;
/** The status as it is answered: signed in with a session's user and token, or signed out with neither. */
export type SessionStatus = ({ signedIn: true } & Session) | { signedIn: false };
export const SessionStatusAnswer = SessionStatusSchema as TSchema as TSchema & { static: SessionStatus };

export const UserListSchema = Type.Object({ items: Type.Array(UserSchema) });
export type UserList = Static<typeof UserListSchema>;
