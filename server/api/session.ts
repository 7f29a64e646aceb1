/**
 * REST: /session — the web UI's login. A session lives in the HttpOnly,
 * SameSite=Strict `svc_session` cookie (Secure over TLS); writes made with it
 * must echo `csrfToken` in the X-CSRF-Token header. Log in, redeem an invite
 * and redeem a password reset are the API's only public calls, with the
 * session status the UI asks at start (it looks at the cookie itself and
 * answers 200 either way).
 */
import { Type } from "@sinclair/typebox";
import { type LoggedIn, MAX_PASSWORD_LENGTH, type Users } from "../auth/users.ts";
import { sessionClearCookie, sessionCookie, sessionSetCookie } from "../auth/sessions.ts";
import { json } from "../lib/json.ts";
import { route, type Route } from "../http/route.ts";
import { SessionSchema as SessionAnswer, SessionStatusSchema as SessionStatus } from "../../shared/users.ts";

const Password = Type.String({ minLength: 1, maxLength: MAX_PASSWORD_LENGTH });

const LoginBody = Type.Object({ username: Type.String({ minLength: 1, maxLength: 64 }), password: Password }, { additionalProperties: false });

const RedeemBody = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 200 }),
    password: Type.String({ description: "At least 12 characters." }),
  },
  { additionalProperties: false },
);

function loggedIn({ user, session }: LoggedIn, secure: boolean): Response {
  return json({ user, csrfToken: session.csrfToken, expiresAt: session.expiresAt }, 200, {
    "Set-Cookie": sessionSetCookie(session.token, secure),
  });
}

/** What the /session routes use. */
export interface SessionApiDeps {
  users: Users;
}

export function sessionRoutes(deps: SessionApiDeps): Route[] {
  const { users } = deps;
  return [
    route({
      method: "POST",
      path: "/session",
      scope: null,
      tag: "session",
      summary:
        "Log in with username and password: sets the session cookie and answers the user and the CSRF token. 401 invalid_credentials for any wrong username, password or a disabled user; 429 rate_limited past rateLimit.passwords for the address or rateLimit.loginFailures for the username; 503 overloaded while the server hashes as many passwords as it can.",
      body: LoginBody,
      response: SessionAnswer,
      checksPassword: true,
      handler: async ({ body, principal, secure }) => loggedIn(await users.login(body.username, body.password, principal.remoteAddr), secure),
    }),
    route({
      method: "GET",
      path: "/session",
      scope: null,
      session: true,
      tag: "session",
      summary: "The logged-in user and the session's CSRF token (cookie only; 401 without a live session).",
      response: SessionAnswer,
      handler: async ({ principal }) => ({ user: await users.get(principal.id), csrfToken: principal.session!.csrfToken }),
    }),
    route({
      method: "GET",
      path: "/session/status",
      scope: null,
      tag: "session",
      summary:
        "Whether the caller is signed in: 200 with signedIn false when no live session cookie came (a stale cookie is cleared), else as GET /session. The UI asks this at start, so opening the login page is not an authentication failure.",
      response: SessionStatus,
      handler: async ({ req, principal, secure }) => {
        const token = sessionCookie(req.headers.get("cookie"));
        if (token === null) return { signedIn: false };
        const user = await users.authenticate(token, principal.remoteAddr);
        if (user === null) return json({ signedIn: false }, 200, { "Set-Cookie": sessionClearCookie(secure) });
        return { signedIn: true, user: await users.get(user.id), csrfToken: user.session!.csrfToken };
      },
    }),
    route({
      method: "DELETE",
      path: "/session",
      scope: null,
      session: true,
      tag: "session",
      summary: "Log out: ends the session and clears the cookie.",
      status: 204,
      handler: async ({ principal, secure }) => {
        await users.logout(principal);
        return new Response(null, { status: 204, headers: { "Set-Cookie": sessionClearCookie(secure) } });
      },
    }),
    route({
      method: "POST",
      path: "/session/invite",
      scope: null,
      tag: "session",
      summary:
        "Accept an invite: sets the invited user's password (at least 12 characters), uses up the link and logs in. 400 invalid_token for a used, expired or unknown link.",
      body: RedeemBody,
      response: SessionAnswer,
      checksPassword: true,
      handler: async ({ body, principal, secure }) => loggedIn(await users.redeem("invite", body.token, body.password, principal.remoteAddr), secure),
    }),
    route({
      method: "POST",
      path: "/session/password-reset",
      scope: null,
      tag: "session",
      summary: "Redeem a password-reset link: sets the new password, uses up the link, ends the user's other sessions and logs in.",
      body: RedeemBody,
      response: SessionAnswer,
      checksPassword: true,
      handler: async ({ body, principal, secure }) => loggedIn(await users.redeem("reset", body.token, body.password, principal.remoteAddr), secure),
    }),
  ];
}
