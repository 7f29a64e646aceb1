/**
 * Users on its own against a real in-memory SQLite store, no HTTP server:
 * create and invite, log-in answers and their audited reasons, the per-name
 * lockout, sessions (authenticate, logout, what ends them), reset links,
 * role changes within the caller's scopes, the last enabled admin, link
 * delivery that fails before anything is written, the bootstrap admin and
 * link pruning. test/api/users.test.ts covers the same through HTTP
 * (cookies, CSRF, status codes); this file checks what the module decides.
 * argon2 is slow by design, so each test hashes only a few passwords.
 */
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { SYSTEM_ACTOR } from "../audit/audit.ts";
import { AppError } from "../errors.ts";
import { SqliteStore } from "../store/sqlite.ts";
import { ROLES } from "./scopes.ts";
import type { Principal } from "./service-accounts.ts";
import { Sessions } from "./sessions.ts";
import { hashToken } from "./tokens.ts";
import { InvalidCredentialsError, Users, type LinkDelivery, type UserLink } from "./users.ts";

let store: SqliteStore;
let users: Users;

/** Failed log-ins per name: two, then locked (refilling far slower than any test runs). */
const LOGIN_FAILURES = { perSecond: 0.001, burst: 2 };
const PASSWORD = "a-password-long-enough";
const SLOW = 30_000;

beforeEach(() => {
  store = new SqliteStore(":memory:");
  users = new Users(store, new Sessions(store), { loginFailures: LOGIN_FAILURES });
});
afterEach(async () => {
  await store.close();
});

/** The AppError code `promise` is rejected with; fails the test when it resolves or throws something else. */
async function codeOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => new Error("resolved"),
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  return (error as AppError).code;
}

/** An actor holding exactly the scopes of `role`, as a logged-in user of that role would. */
function holder(role: keyof typeof ROLES): Principal {
  return { kind: "user", id: `${role}-holder`, name: `${role}-holder`, actor: `user:${role}-holder`, remoteAddr: null, scopes: new Set(ROLES[role]) };
}

async function audit(action: string) {
  return store.queryAudit({ action, limit: 100 });
}

/** An invited user who accepted: logged in once, with a password. */
async function member(username: string, role: "admin" | "editor" | "viewer" = "viewer") {
  const { user, invite } = await users.create(SYSTEM_ACTOR, { username, email: `${username}@example.com`, role });
  const { session } = await users.redeem("invite", invite!.token, PASSWORD, null);
  return { user, session };
}

describe("create and invite", () => {
  test("a user without a password gets a single-use invite link; the name is lowercased and unique", async () => {
    const { user, invite } = await users.create(SYSTEM_ACTOR, { username: "Vera", email: "vera@example.com", role: "viewer" });
    expect(user).toMatchObject({ username: "vera", email: "vera@example.com", role: "viewer", createdBy: "system", disabledAt: null });
    expect(invite!.token).toMatch(/^svcul_[0-9A-Za-z]{43}$/);
    expect(Date.parse(invite!.expiresAt) - Date.now()).toBeGreaterThan(6.9 * 24 * 3600_000);
    expect(await users.get(user.id)).toEqual(user);
    expect(await codeOf(users.create(SYSTEM_ACTOR, { username: "VERA", email: "v@example.com", role: "editor" }))).toBe("username_taken");
    expect(await codeOf(users.create(SYSTEM_ACTOR, { username: "no spaces", email: "", role: "viewer" }))).toBe("validation_failed");
    expect(await users.count()).toBe(1);
    expect((await audit("user.create"))[0]!.details).toMatchObject({ username: "vera", invited: true });
  });

  test(
    "accepting an invite sets the password and opens a session; the link then works no more",
    async () => {
      const { user, invite } = await users.create(SYSTEM_ACTOR, { username: "vera", email: "vera@example.com", role: "viewer" });
      // Not a reset link, and a short password is refused before anything is written.
      expect(await codeOf(users.redeem("reset", invite!.token, PASSWORD, null))).toBe("invalid_token");
      expect(await codeOf(users.redeem("invite", invite!.token, "short", null))).toBe("validation_failed");
      const accepted = await users.redeem("invite", invite!.token, PASSWORD, "10.0.0.1");
      expect(accepted.user).toEqual(user);
      expect(await users.authenticate(accepted.session.token, null)).toMatchObject({ kind: "user", id: user.id, name: "vera" });
      expect(await codeOf(users.redeem("invite", invite!.token, "another-long-password", null))).toBe("invalid_token");
      expect((await audit("user.invite_accepted"))[0]).toMatchObject({ actor: "user:vera", remoteAddr: "10.0.0.1" });
      expect((await users.login("vera", PASSWORD, null)).user.id).toBe(user.id);
    },
    SLOW,
  );

  test(
    "the stored user keeps an argon2id hash, never the password, and no answer carries either",
    async () => {
      const { user } = await member("vera");
      expect(Object.keys(await users.get(user.id)).sort()).toEqual(["createdAt", "createdBy", "disabledAt", "email", "id", "role", "username"]);
      const stored = JSON.stringify(await store.list("users"));
      expect(stored).toContain("$argon2id$");
      expect(stored).not.toContain(PASSWORD);
      expect(JSON.stringify(await store.queryAudit({ limit: 100 }))).not.toContain(PASSWORD);
    },
    SLOW,
  );
});

describe("log in", () => {
  test(
    "unknown user, no password yet, wrong password and disabled user get the same error, each audited with its reason",
    async () => {
      await users.create(SYSTEM_ACTOR, { username: "invited", email: "", role: "viewer" });
      const { user } = await member("vera");
      await users.update(SYSTEM_ACTOR, user.id, { disabled: true });
      for (const [name, password] of [
        ["nobody", PASSWORD],
        ["invited", PASSWORD],
        ["vera", "not-the-password"],
        ["vera", PASSWORD],
      ] as const) {
        const error = await users.login(name, password, "10.0.0.2").catch((e: unknown) => e);
        expect(error).toBeInstanceOf(InvalidCredentialsError);
      }
      const failures = (await audit("session.login")).filter((e) => e.outcome === "failure");
      expect(failures.map((e) => e.details.reason).sort()).toEqual(["disabled", "no_password", "unknown_user", "wrong_password"]);
      expect(failures.every((e) => e.actor === "anonymous" && e.remoteAddr === "10.0.0.2")).toBe(true);
    },
    SLOW,
  );

  test(
    "a name past its failed log-ins from an address is refused (429) there even with the right password, known or not; other names are not",
    async () => {
      await member("vera");
      for (let i = 0; i < LOGIN_FAILURES.burst; i++) await users.login("Vera", "not-the-password", "203.0.113.9").catch(() => {});
      expect(await codeOf(users.login("vera", PASSWORD, "203.0.113.9"))).toBe("rate_limited");
      // The user's own address is not the guesser's: the right password still logs in there.
      expect((await users.login("vera", PASSWORD, "10.0.0.7")).user.username).toBe("vera");
      expect(await codeOf(users.login("vera", PASSWORD, "203.0.113.9"))).toBe("rate_limited");
      for (let i = 0; i < LOGIN_FAILURES.burst; i++) await users.login("ghost", "not-the-password", null).catch(() => {});
      expect(await codeOf(users.login("ghost", "not-the-password", null))).toBe("rate_limited");
      await users.create(SYSTEM_ACTOR, { username: "mona", email: "", role: "viewer" }, PASSWORD);
      expect((await users.login("mona", PASSWORD, null)).user.username).toBe("mona");
    },
    SLOW,
  );
});

describe("sessions", () => {
  test(
    "a session stands for its user with the role's scopes until logout",
    async () => {
      const { user, session } = await member("eddie", "editor");
      const principal = (await users.authenticate(session.token, "10.0.0.3"))!;
      expect(principal).toMatchObject({ kind: "user", id: user.id, actor: "user:eddie", remoteAddr: "10.0.0.3" });
      expect([...principal.scopes]).toEqual(ROLES.editor);
      expect(principal.session).toEqual({ id: session.digest, csrfToken: session.csrfToken });
      expect(await users.authenticate("svcus_" + "x".repeat(43), null)).toBeNull();
      await users.logout(principal);
      expect(await users.authenticate(session.token, null)).toBeNull();
      expect((await audit("session.logout"))[0]).toMatchObject({ actor: "user:eddie" });
    },
    SLOW,
  );

  test(
    "a role change fails a live session's check; disabling ends its sessions for good",
    async () => {
      const { user, session } = await member("eddie", "editor");
      const principal = (await users.authenticate(session.token, null))!;
      expect(await principal.live!.check!()).toBe(true);
      await users.update(SYSTEM_ACTOR, user.id, { role: "viewer" });
      expect(await principal.live!.check!()).toBe(false);
      expect([...(await users.authenticate(session.token, null))!.scopes]).toEqual(ROLES.viewer);

      await users.update(SYSTEM_ACTOR, user.id, { disabled: true });
      expect(await users.authenticate(session.token, null)).toBeNull();
      expect(await users.sessions.countOf(user.id)).toBe(0);
      await users.update(SYSTEM_ACTOR, user.id, { disabled: false });
      expect(await users.authenticate(session.token, null)).toBeNull();
    },
    SLOW,
  );

  test(
    "deleting a user ends their sessions, drops their link and frees the name",
    async () => {
      const { user, session } = await member("vera");
      await users.mintReset(SYSTEM_ACTOR, user.id);
      await users.delete(SYSTEM_ACTOR, user.id);
      expect(await users.authenticate(session.token, null)).toBeNull();
      expect(await store.count("user_links")).toBe(0);
      expect(await codeOf(users.get(user.id))).toBe("not_found");
      expect((await users.create(SYSTEM_ACTOR, { username: "vera", email: "", role: "editor" })).user.id).not.toBe(user.id);
    },
    SLOW,
  );
});

describe("password reset", () => {
  test(
    "a new reset link revokes the earlier one; redeeming ends every other session; the link is single use",
    async () => {
      const { user, session } = await member("vera");
      const first = await users.mintReset(SYSTEM_ACTOR, user.id);
      const second = await users.mintReset(SYSTEM_ACTOR, user.id);
      expect(Date.parse(second.expiresAt) - Date.now()).toBeLessThanOrEqual(3600_000);
      expect(await codeOf(users.redeem("reset", first.token, "the-new-password-1", null))).toBe("invalid_token");
      expect(await codeOf(users.redeem("invite", second.token, "the-new-password-1", null))).toBe("invalid_token");
      const reset = await users.redeem("reset", second.token, "the-new-password-1", null);
      expect(await users.authenticate(session.token, null)).toBeNull();
      expect(await users.authenticate(reset.session.token, null)).not.toBeNull();
      expect(await codeOf(users.redeem("reset", second.token, "the-new-password-2", null))).toBe("invalid_token");
      expect((await users.login("vera", "the-new-password-1", null)).user.id).toBe(user.id);
    },
    SLOW,
  );

  test(
    "an expired link is refused, and pruning deletes only expired links",
    async () => {
      const { user: vera } = await member("vera");
      const late = await users.mintReset(SYSTEM_ACTOR, vera.id);
      const { invite } = await users.create(SYSTEM_ACTOR, { username: "mona", email: "", role: "viewer" });
      const doc = (await store.get<{ expiresAt: string }>("user_links", hashToken(late.token)))!;
      await store.write([{ op: "put", collection: "user_links", id: doc.id, data: { ...doc.data, expiresAt: new Date(Date.now() - 1000).toISOString() } }]);
      expect(await codeOf(users.redeem("reset", late.token, "never-set-password", null))).toBe("invalid_token");
      expect(await users.pruneLinks(new Date())).toBe(1);
      expect(await store.get("user_links", hashToken(invite!.token))).not.toBeNull();
      expect(await users.pruneLinks(new Date())).toBe(0);
    },
    SLOW,
  );
});

describe("roles and admins", () => {
  test("the last enabled admin cannot be demoted, disabled or deleted; with another admin it can", async () => {
    const { user: first } = await users.create(SYSTEM_ACTOR, { username: "first", email: "", role: "admin" });
    const { user: second } = await users.create(SYSTEM_ACTOR, { username: "second", email: "", role: "viewer" });
    expect(await codeOf(users.update(SYSTEM_ACTOR, first.id, { role: "editor" }))).toBe("last_admin");
    expect(await codeOf(users.update(SYSTEM_ACTOR, first.id, { disabled: true }))).toBe("last_admin");
    expect(await codeOf(users.delete(SYSTEM_ACTOR, first.id))).toBe("last_admin");
    // A disabled admin does not count.
    await users.update(SYSTEM_ACTOR, second.id, { role: "admin", disabled: true });
    expect(await codeOf(users.update(SYSTEM_ACTOR, first.id, { role: "editor" }))).toBe("last_admin");
    await users.update(SYSTEM_ACTOR, second.id, { disabled: false });
    expect(await users.update(SYSTEM_ACTOR, first.id, { role: "editor" })).toMatchObject({ role: "editor" });
    expect(await codeOf(users.delete(SYSTEM_ACTOR, second.id))).toBe("last_admin");
    const changes = (await audit("user.update")).map((e) => e.details);
    expect(changes).toContainEqual({ username: "first", role: { from: "admin", to: "editor" } });
    expect(changes).toContainEqual({ username: "second", role: { from: "viewer", to: "admin" }, disabled: true });
  });

  test("a caller acts only on users and roles within its own scopes", async () => {
    const editor = holder("editor");
    const { user: boss } = await users.create(SYSTEM_ACTOR, { username: "boss", email: "", role: "admin" });
    const { user: eddie } = await users.create(editor, { username: "eddie", email: "", role: "viewer" });
    expect(eddie.createdBy).toBe("user:editor-holder");
    expect(await codeOf(users.create(editor, { username: "new-admin", email: "", role: "admin" }))).toBe("forbidden");
    expect(await codeOf(users.update(editor, eddie.id, { role: "admin" }))).toBe("forbidden");
    expect(await codeOf(users.update(editor, boss.id, { email: "boss@example.com" }))).toBe("forbidden");
    expect(await codeOf(users.mintReset(editor, boss.id))).toBe("forbidden");
    expect(await codeOf(users.delete(editor, boss.id))).toBe("forbidden");
    expect(await users.update(editor, eddie.id, { role: "editor" })).toMatchObject({ role: "editor" });
    // An actor without a scope set holds none.
    expect(await codeOf(users.create({ actor: "sa:bare", remoteAddr: null }, { username: "x", email: "", role: "viewer" }))).toBe("forbidden");
  });
});

describe("link delivery", () => {
  const refusing: LinkDelivery = async () => {
    throw new Error("550 mailbox unavailable");
  };

  test("an invite whose delivery fails creates nothing and is audited as a failure", async () => {
    const delivered: [UserLink, string][] = [];
    await users.create(SYSTEM_ACTOR, { username: "mona", email: "mona@example.com", role: "viewer" }, undefined, [], async (link, user) => {
      delivered.push([link, user.email]);
    });
    expect(delivered).toHaveLength(1);
    expect((await audit("user.create"))[0]!.details).toMatchObject({ mailedTo: "mona@example.com" });

    const error = await users
      .create(SYSTEM_ACTOR, { username: "nina", email: "nina@example.com", role: "viewer" }, undefined, [], refusing)
      .catch((e: Error) => e);
    expect((error as Error).message).toBe("550 mailbox unavailable");
    expect((await users.list()).map((u) => u.username)).toEqual(["mona"]);
    const [failure] = await audit("user.create");
    expect(failure).toMatchObject({ outcome: "failure", resourceId: null, details: { username: "nina", error: "550 mailbox unavailable" } });
  });

  test(
    "a reset whose delivery fails leaves the earlier link working",
    async () => {
      const { user } = await users.create(SYSTEM_ACTOR, { username: "vera", email: "vera@example.com", role: "viewer" }, PASSWORD);
      const earlier = await users.mintReset(SYSTEM_ACTOR, user.id);
      expect(await users.mintReset(SYSTEM_ACTOR, user.id, refusing).catch((e: Error) => e.message)).toBe("550 mailbox unavailable");
      expect((await audit("user.password_reset_link"))[0]).toMatchObject({ outcome: "failure", resourceId: user.id });
      expect((await users.redeem("reset", earlier.token, "the-new-password-1", null)).user.id).toBe(user.id);
    },
    SLOW,
  );
});

test(
  "the bootstrap admin is made once, on a store with no users, with a random password that logs in",
  async () => {
    const password = (await users.bootstrapAdmin())!;
    expect(password).toMatch(/^[A-Za-z0-9]{20}$/);
    expect((await users.login("admin", password, null)).user).toMatchObject({ username: "admin", role: "admin", createdBy: "system" });
    expect(await users.bootstrapAdmin()).toBeNull();
    // Its marker stays: with every user gone, a restart makes no second admin.
    const [admin] = await users.list();
    await store.write([
      { op: "delete", collection: "users", id: admin!.id },
      { op: "delete", collection: "user_names", id: "admin" },
    ]);
    expect(await users.bootstrapAdmin()).toBeNull();
  },
  SLOW,
);

test("bootstrapAdmin makes no admin when users exist already", async () => {
  await users.create(SYSTEM_ACTOR, { username: "vera", email: "", role: "viewer" });
  expect(await users.bootstrapAdmin()).toBeNull();
  expect(await users.count()).toBe(1);
});
