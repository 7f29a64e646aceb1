/**
 * Web UI accounts against a real server with real fetch and cookies: log in
 * and out, cookie attributes, CSRF on cookie writes (not on Bearer), roles,
 * invite and reset links (single use, expiring), last-admin protection,
 * disabled users, and that no password ever shows in an answer or the audit log.
 * argon2 is slow by design, so the file hashes only a handful of passwords.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { hashToken } from "../../server/auth/tokens.ts";
import { startTestServer, type TestServer } from "../harness.ts";

let server: TestServer;
let admin: { username: string; password: string };
/** Every answer body seen, to check no password ever appears in one. */
const answers: string[] = [];
const passwords: string[] = [];

interface Session {
  cookie: string;
  csrf: string;
}

async function call(path: string, init: RequestInit & { json?: unknown; session?: Session | null; csrf?: string | null; token?: string } = {}) {
  const { json, session, csrf, token, ...rest } = init;
  const headers = new Headers(rest.headers);
  if (session) headers.set("Cookie", session.cookie);
  const sentCsrf = csrf === undefined ? session?.csrf : csrf;
  if (sentCsrf) headers.set("X-CSRF-Token", sentCsrf);
  if (token) headers.set("Authorization", `Bearer ${token}`);
  if (json !== undefined) headers.set("Content-Type", "application/json");
  const res = await fetch(`${server.base}/api/v1${path}`, { ...rest, headers, body: json === undefined ? rest.body : JSON.stringify(json) });
  const text = await res.text();
  answers.push(text, res.headers.get("set-cookie") ?? "");
  return { status: res.status, headers: res.headers, body: (text === "" ? undefined : JSON.parse(text)) as any };
}

function sessionOf(res: { headers: Headers; body: any }): Session {
  const set = res.headers.get("set-cookie")!;
  return { cookie: set.split(";")[0]!, csrf: res.body.csrfToken };
}

async function login(username: string, password: string, headers: Record<string, string> = {}) {
  return call("/session", { method: "POST", json: { username, password }, headers });
}

const tokenOf = (url: string) => new URL(url).searchParams.get("token")!;

beforeAll(async () => {
  server = await startTestServer({ SVC_EXTERNALURL: "https://svc.example.com", SVC_HTTP_TRUSTEDPROXIES: "127.0.0.1" });
  admin = await server.uiAdmin();
  passwords.push(admin.password);
});
afterAll(() => server.stop());

describe("log in and out", () => {
  test("wrong password and unknown user get the same 401; the bootstrap admin logs in", async () => {
    expect(admin.password).toMatch(/^[A-Za-z0-9]{20}$/);
    const wrong = await login("admin", "not-the-password-at-all");
    const unknown = await login("nobody", "not-the-password-at-all");
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect(wrong.body.error.code).toBe("invalid_credentials");
    expect(unknown.body.error).toEqual(wrong.body.error);
    expect(wrong.headers.get("set-cookie")).toBeNull();

    const ok = await login("ADMIN", admin.password);
    expect(ok.status).toBe(200);
    expect(ok.body.user).toMatchObject({ username: "admin", role: "admin", disabledAt: null });
    expect(ok.body.user.passwordHash).toBeUndefined();
    expect(ok.body.csrfToken).toMatch(/^[A-Za-z0-9_-]{43}$/);

    const failures = await server.call<{ items: { outcome: string; actor: string; details: Record<string, unknown> }[] }>("/audit?action=session.login");
    expect(failures.items.map((e) => e.outcome).sort()).toEqual(["failure", "failure", "success"]);
    expect(failures.items.find((e) => e.outcome === "success")!.actor).toBe("user:admin");
  });

  test("the cookie is HttpOnly, SameSite=Strict, Path=/, and Secure only over TLS", async () => {
    const plain = await login("admin", admin.password);
    const attrs = plain.headers
      .get("set-cookie")!
      .split(";")
      .map((s) => s.trim());
    expect(attrs[0]).toMatch(/^svc_session=svcus_[0-9A-Za-z]{43}$/);
    expect(attrs).toContain("HttpOnly");
    expect(attrs).toContain("SameSite=Strict");
    expect(attrs).toContain("Path=/");
    expect(attrs).not.toContain("Secure");
    // Through a trusted proxy that terminated TLS.
    const tls = await login("admin", admin.password, { "X-Forwarded-Proto": "https" });
    expect(
      tls.headers
        .get("set-cookie")!
        .split(";")
        .map((s) => s.trim()),
    ).toContain("Secure");
  });

  test("GET /session answers the user and the CSRF token; logout ends the session and clears the cookie", async () => {
    const session = sessionOf(await login("admin", admin.password));
    const me = await call("/session", { session });
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ user: { username: "admin" }, csrfToken: session.csrf });
    expect((await call("/session")).status).toBe(401);
    expect((await call("/session", { token: server.adminToken })).status).toBe(401);

    expect((await call("/session", { method: "DELETE", session, csrf: null })).body.error.code).toBe("csrf_failed");
    const out = await call("/session", { method: "DELETE", session });
    expect(out.status).toBe(204);
    expect(out.headers.get("set-cookie")).toMatch(/^svc_session=; .*Max-Age=0/);
    expect((await call("/session", { session })).status).toBe(401);
    expect((await call("/collectors", { session })).status).toBe(401);
  });
});

describe("CSRF and roles", () => {
  test("a cookie write needs X-CSRF-Token; a Bearer write does not; reads need none", async () => {
    const session = sessionOf(await login("admin", admin.password));
    expect((await call("/collectors", { session, csrf: null })).status).toBe(200);
    const missing = await call("/collectors", { method: "POST", session, csrf: null, json: { name: "c1" } });
    expect(missing.status).toBe(403);
    expect(missing.body.error.code).toBe("csrf_failed");
    const wrong = await call("/collectors", { method: "POST", session, csrf: session.csrf.slice(0, -1) + "x", json: { name: "c1" } });
    expect(wrong.body.error.code).toBe("csrf_failed");
    const ok = await call("/collectors", { method: "POST", session, json: { name: "c1" } });
    expect(ok.status).toBe(201);
    const bearer = await call("/collectors", { method: "POST", token: server.adminToken, json: { name: "c2" } });
    expect(bearer.status).toBe(201);
    const audit = await server.call<{ items: { actor: string }[] }>("/audit?action=collector.create");
    expect(audit.items.map((e) => e.actor)).toContain("user:admin");
  });
});

describe("invites, resets, roles and admins", () => {
  let vera: { id: string; session: Session; password: string };

  test("an invite is a single-use link; accepting it sets the password and logs in", async () => {
    const session = sessionOf(await login("admin", admin.password));
    const invited = await call("/users", { method: "POST", session, json: { username: "Vera", email: "vera@example.com", role: "viewer" } });
    expect(invited.status).toBe(201);
    expect(invited.body.user).toMatchObject({ username: "vera", email: "vera@example.com", role: "viewer", createdBy: "user:admin" });
    expect(invited.body.inviteUrl).toMatch(/^https:\/\/svc\.example\.com\/ui\/invite\?token=svcul_[0-9A-Za-z]{43}$/);
    const dup = await call("/users", { method: "POST", session, json: { username: "vera", email: "v@example.com", role: "viewer" } });
    expect(dup.body.error.code).toBe("username_taken");

    // Not yet accepted: no password works.
    expect((await login("vera", "anything-at-all-123")).status).toBe(401);
    const token = tokenOf(invited.body.inviteUrl);
    const short = await call("/session/invite", { method: "POST", json: { token, password: "short" } });
    expect(short.status).toBe(400);
    const password = "vera-first-password";
    passwords.push(password);
    const accepted = await call("/session/invite", { method: "POST", json: { token, password } });
    expect(accepted.status).toBe(200);
    expect(accepted.body.user.username).toBe("vera");
    vera = { id: invited.body.user.id, session: sessionOf(accepted), password };
    const again = await call("/session/invite", { method: "POST", json: { token, password: "another-password-1" } });
    expect(again.status).toBe(400);
    expect(again.body.error.code).toBe("invalid_token");
  });

  test("a viewer reads but cannot write or administer", async () => {
    expect((await call("/collectors", { session: vera.session })).status).toBe(200);
    const write = await call("/collectors", { method: "POST", session: vera.session, json: { name: "nope" } });
    expect(write.status).toBe(403);
    expect(write.body.error.code).toBe("forbidden");
    expect((await call("/users", { session: vera.session })).status).toBe(403);
  });

  test("a reset link is single use, ends the user's other sessions and expires", async () => {
    const other = sessionOf(await login("vera", vera.password));
    const reset = await call(`/users/${vera.id}/password-reset`, { method: "POST", token: server.adminToken });
    expect(reset.status).toBe(201);
    expect(reset.body.resetUrl).toMatch(/^https:\/\/svc\.example\.com\/ui\/reset-password\?token=svcul_/);
    const token = tokenOf(reset.body.resetUrl);
    // An invite link cannot be used as a reset or the other way round.
    expect((await call("/session/invite", { method: "POST", json: { token, password: "whatever-password-1" } })).status).toBe(400);

    const password = "vera-second-password";
    passwords.push(password);
    const done = await call("/session/password-reset", { method: "POST", json: { token, password } });
    expect(done.status).toBe(200);
    const fresh = sessionOf(done);
    expect((await call("/session", { session: vera.session })).status).toBe(401);
    expect((await call("/session", { session: other })).status).toBe(401);
    expect((await call("/session", { session: fresh })).status).toBe(200);
    expect((await call("/session/password-reset", { method: "POST", json: { token, password: "third-password-1" } })).status).toBe(400);
    expect((await login("vera", vera.password)).status).toBe(401);
    vera = { ...vera, session: fresh, password };

    // An expired link is refused (its expiry moved to the past in the store).
    const late = tokenOf((await call(`/users/${vera.id}/password-reset`, { method: "POST", token: server.adminToken })).body.resetUrl);
    const doc = (await server.app.store.get<{ expiresAt: string }>("user_links", hashToken(late)))!;
    await server.app.store.write([
      { op: "put", collection: "user_links", id: doc.id, data: { ...doc.data, expiresAt: new Date(Date.now() - 1000).toISOString() } },
    ]);
    const expired = await call("/session/password-reset", { method: "POST", json: { token: late, password: "never-set-password" } });
    expect(expired.status).toBe(400);
  });

  test("a session idle for more than 12 hours has ended", async () => {
    const session = sessionOf(await login("admin", admin.password));
    const digest = hashToken(session.cookie.slice("svc_session=".length));
    const doc = (await server.app.store.get<{ lastSeenAt: string }>("sessions", digest))!;
    const old = new Date(Date.now() - 13 * 3600_000).toISOString();
    await server.app.store.write([{ op: "put", collection: "sessions", id: digest, data: { ...doc.data, lastSeenAt: old } }]);
    expect((await call("/session", { session })).status).toBe(401);
  });

  test("the last enabled admin cannot be demoted, disabled or deleted", async () => {
    const adminId = (await server.call<{ items: { id: string; username: string }[] }>("/users")).items.find((u) => u.username === "admin")!.id;
    for (const [method, json] of [
      ["PATCH", { role: "editor" }],
      ["PATCH", { disabled: true }],
      ["DELETE", undefined],
    ] as const) {
      const res = await call(`/users/${adminId}`, { method, json, token: server.adminToken });
      expect({ method, json, status: res.status, code: res.body?.error.code }).toEqual({ method, json, status: 409, code: "last_admin" });
    }
    // With a second admin, the first may step down.
    expect((await call(`/users/${vera.id}`, { method: "PATCH", json: { role: "admin" }, token: server.adminToken })).body.role).toBe("admin");
    expect((await call(`/users/${adminId}`, { method: "PATCH", json: { role: "editor" }, token: server.adminToken })).status).toBe(200);
    expect((await call(`/users/${vera.id}`, { method: "PATCH", json: { disabled: true }, token: server.adminToken })).body.error.code).toBe("last_admin");
    expect((await call(`/users/${adminId}`, { method: "PATCH", json: { role: "admin" }, token: server.adminToken })).status).toBe(200);
  });

  test("a disabled user's session stops at once, and the user cannot log in", async () => {
    expect((await call("/users", { session: vera.session })).status).toBe(200); // vera is admin now
    const disabled = await call(`/users/${vera.id}`, { method: "PATCH", json: { disabled: true }, token: server.adminToken });
    expect(disabled.body.disabledAt).not.toBeNull();
    expect((await call("/session", { session: vera.session })).status).toBe(401);
    const refused = await login("vera", vera.password);
    expect(refused.status).toBe(401);
    expect(refused.body.error.code).toBe("invalid_credentials");
    // Enabled again, the old session stays ended.
    await call(`/users/${vera.id}`, { method: "PATCH", json: { disabled: false }, token: server.adminToken });
    expect((await call("/session", { session: vera.session })).status).toBe(401);
  });

  test("deleting a user ends their sessions and frees the name", async () => {
    const session = sessionOf(await login("vera", vera.password));
    expect((await call(`/users/${vera.id}`, { method: "DELETE", token: server.adminToken })).status).toBe(204);
    expect((await call("/session", { session })).status).toBe(401);
    expect((await call(`/users/${vera.id}`, { token: server.adminToken })).status).toBe(404);
    const again = await call("/users", { method: "POST", token: server.adminToken, json: { username: "vera", email: "vera@example.com", role: "editor" } });
    expect(again.status).toBe(201);
  });
});

test("without externalUrl, invites and resets are 409 external_url_missing", async () => {
  const bare = await startTestServer();
  try {
    const res = await bare.api("/users", { method: "POST", json: { username: "x", email: "x@example.com", role: "viewer" } });
    expect(res.status).toBe(409);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("external_url_missing");
    expect(await bare.app.users.count()).toBe(0);
  } finally {
    await bare.stop();
  }
});

test("no password appears in any answer, the audit log or the stored users", async () => {
  const audit = JSON.stringify(await server.app.store.queryAudit({ limit: 10_000 }));
  const stored = JSON.stringify(await server.app.store.list("users"));
  expect(stored).toContain("$argon2id$");
  for (const password of passwords) {
    for (const text of answers) expect(text.includes(password)).toBe(false);
    expect(audit.includes(password)).toBe(false);
    expect(stored.includes(password)).toBe(false);
  }
});
