/**
 * Human users of the web UI: a username, an e-mail address and a role
 * (admin, editor or viewer — named scope sets, see scopes.ts). Passwords are
 * kept only as argon2id hashes (Bun.password). Usernames are unique through the
 * `user_names/<username>` index written in the same store write as the user.
 *
 * Invites and password resets are single-use `svcul_` link tokens stored as
 * digests under `user_links/<digest>`; a user holds at most one live link
 * (minting a new one revokes the previous). Every change to the user set also
 * bumps `system/users` under compare-and-swap, so two concurrent changes can
 * never together remove the last enabled admin.
 *
 * A link can be delivered (mailed) before anything is written: when delivery
 * fails, the failure is audited and the user set is left exactly as it was.
 */
import { randomBytes } from "node:crypto";
import { auditEntry, SYSTEM_ACTOR, type Actor } from "../audit/audit.ts";
import { AppError, ConflictError, ForbiddenError, NotFoundError, RateLimitedError, ValidationError } from "../errors.ts";
import { RateLimiter, type RateLimit } from "../lib/ratelimit.ts";
import type { Doc, Store, WriteOp } from "../store/store.ts";
import { PasswordGate } from "./password-gate.ts";
import type { Role } from "../../shared/access.ts";
import { missingScope, ROLES, type Scope } from "./scopes.ts";
import type { Principal } from "./service-accounts.ts";
import { csrfTokenFor, type Sessions, SESSIONS, type NewSession } from "./sessions.ts";
import { digestsEqual, hashToken, mintToken, tokenKind } from "./tokens.ts";

export const USERNAME_PATTERN = "^[a-z0-9._-]{1,64}$";
export const MIN_PASSWORD_LENGTH = 12;
export const MAX_PASSWORD_LENGTH = 1024;
export const INVITE_TTL_MS = 7 * 24 * 60 * 60 * 1000;
export const RESET_TTL_MS = 60 * 60 * 1000;

export interface User {
  id: string;
  username: string;
  email: string;
  role: Role;
  createdAt: string;
  createdBy: string;
  disabledAt: string | null;
}

/** As stored: never leaves this module. */
interface StoredUser extends User {
  passwordHash: string | null;
  /** Digest of the user's one live invite or reset link. */
  linkDigest: string | null;
}

export type LinkPurpose = "invite" | "reset";

interface LinkRecord {
  purpose: LinkPurpose;
  userId: string;
  createdAt: string;
  expiresAt: string;
}

export interface UserLink {
  token: string;
  expiresAt: string;
}

/** Sends a freshly minted link to its user (by mail); throwing stops the change. */
export type LinkDelivery = (link: UserLink, user: User) => Promise<void>;

export interface LoggedIn {
  user: User;
  session: NewSession;
}

const USERS = "users";
const NAMES = "user_names";
const LINKS = "user_links";
const ROSTER = { collection: "system", id: "users" };
const BOOTSTRAP = { collection: "system", id: "bootstrap_user" };

export class InvalidCredentialsError extends AppError {
  constructor() {
    super(401, "invalid_credentials", "The username or password is not correct.");
  }
}

class InvalidLinkError extends AppError {
  constructor() {
    super(400, "invalid_token", "This link is not valid: it was already used, has expired or was replaced by a newer one.");
  }
}

function publicUser({ passwordHash: _p, linkDigest: _l, ...user }: StoredUser): User {
  return user;
}

export function userActor(user: Pick<User, "username">, remoteAddr: string | null): Actor {
  return { actor: `user:${user.username}`, remoteAddr };
}

/** Checks a new password's length; throws ValidationError naming the field. */
export function checkPassword(password: string): void {
  if (password.length < MIN_PASSWORD_LENGTH || password.length > MAX_PASSWORD_LENGTH) {
    throw new ValidationError("The password does not meet the rules.", [
      { path: "password", message: `must be ${MIN_PASSWORD_LENGTH}–${MAX_PASSWORD_LENGTH} characters long` },
    ]);
  }
}

export function hashPassword(password: string): Promise<string> {
  return Bun.password.hash(password, { algorithm: "argon2id" });
}

/** A random password of `length` characters from [A-Za-z0-9] (rejection-sampled, no bias). */
export function randomPassword(length = 20): string {
  const alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
  const limit = 256 - (256 % alphabet.length);
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < limit && out.length < length) out += alphabet[byte % alphabet.length];
    }
  }
  return out;
}

/**
 * Who changes the user set acts only within its own scopes: it may not give a
 * role, nor reset, change, disable or delete a user, whose scopes exceed its
 * own. The server itself (SYSTEM_ACTOR: the bootstrap admin) holds them all;
 * any other actor without a scope set holds none.
 */
function requireWithin(who: Actor, role: Role, what: string): void {
  if (who === SYSTEM_ACTOR) return;
  const held: ReadonlySet<Scope> = (who as Partial<Principal>).scopes ?? new Set();
  const missing = missingScope(held, ROLES[role]);
  if (missing) throw new ForbiddenError(missing, `${what} needs every scope of the role ${role}, and the caller lacks '${missing}'.`);
}

export interface PasswordLimits {
  /**
   * Failed log-ins per username and client address (known names or not, so the limit tells
   * nothing about which exist). Per pair, so a guesser elsewhere does not lock the user out.
   */
  loginFailures: RateLimit;
  gate?: PasswordGate;
}

/** A verify that throws counts as a wrong password, but an overloaded gate is the server's answer, not the user's. */
function rethrowOverload(error: unknown): false {
  if (error instanceof AppError) throw error;
  return false;
}

export class Users {
  /** A hash to verify against when the user is unknown, so timing does not tell. */
  private dummyHash: Promise<string> | null = null;
  private readonly loginFailures: RateLimiter;
  /** Every argon2 hash or verify of a public call runs through it. */
  private readonly gate: PasswordGate;

  constructor(
    private readonly store: Store,
    readonly sessions: Sessions,
    limits: PasswordLimits = { loginFailures: { perSecond: 0.1, burst: 10 } },
  ) {
    this.loginFailures = new RateLimiter(limits.loginFailures);
    this.gate = limits.gate ?? new PasswordGate();
  }

  private dummy(): Promise<string> {
    return (this.dummyHash ??= hashPassword(randomPassword(24)));
  }

  /** The CAS guard on the user set: include it in every write that changes roles, states or membership. */
  private async rosterOp(): Promise<WriteOp> {
    const doc = await this.store.get(ROSTER.collection, ROSTER.id);
    return { op: "put", ...ROSTER, data: { at: new Date().toISOString() }, expect: doc ? doc.version : "absent" };
  }

  private async stored(id: string): Promise<Doc<StoredUser>> {
    const doc = await this.store.get<StoredUser>(USERS, id);
    if (!doc) throw new NotFoundError("User", id);
    return doc;
  }

  async get(id: string): Promise<User> {
    return publicUser((await this.stored(id)).data);
  }

  async list(): Promise<User[]> {
    return (await this.store.list<StoredUser>(USERS)).map(({ data }) => publicUser(data));
  }

  async count(): Promise<number> {
    return this.store.count(USERS);
  }

  private async byName(username: string): Promise<Doc<StoredUser> | null> {
    const name = username.toLowerCase();
    const index = await this.store.get<{ id: string }>(NAMES, name);
    return index ? this.store.get<StoredUser>(USERS, index.data.id) : null;
  }

  private mintLink(purpose: LinkPurpose, userId: string, now: Date): { link: UserLink; digest: string; op: WriteOp } {
    const token = mintToken("userLink");
    const digest = hashToken(token);
    const ttl = purpose === "invite" ? INVITE_TTL_MS : RESET_TTL_MS;
    const record: LinkRecord = { purpose, userId, createdAt: now.toISOString(), expiresAt: new Date(now.getTime() + ttl).toISOString() };
    return { link: { token, expiresAt: record.expiresAt }, digest, op: { op: "put", collection: LINKS, id: digest, data: record, expect: "absent" } };
  }

  /**
   * Delivers a link before the write that makes it valid, so a failed
   * delivery changes nothing; it is audited (outcome failure, with the
   * reason) and rethrown. Should the write then lose a race, the mailed link
   * never works and the caller's error says to try again.
   */
  private async deliverFirst(who: Actor, action: string, resourceId: string | null, user: User, link: UserLink, deliver: LinkDelivery): Promise<void> {
    try {
      await deliver(link, user);
    } catch (error) {
      const details = { username: user.username, email: user.email, error: (error as Error).message };
      await this.store.write([], [auditEntry(who, action, "user", resourceId, details, "failure")]);
      throw error;
    }
  }

  /**
   * Creates a user. Without a password the user gets an invite link (7 days,
   * single use) to set one, delivered first when `deliver` is given; with one
   * (the bootstrap admin) no link is made.
   */
  async create(
    who: Actor,
    input: { username: string; email: string; role: Role },
    password?: string,
    extra: WriteOp[] = [],
    deliver?: LinkDelivery,
  ): Promise<{ user: User; invite: UserLink | null }> {
    const username = input.username.toLowerCase();
    if (!new RegExp(USERNAME_PATTERN).test(username)) {
      throw new ValidationError("The username is not valid.", [{ path: "username", message: "must be 1–64 of a-z, 0-9, '.', '_' or '-'" }]);
    }
    requireWithin(who, input.role, "Inviting a user as " + input.role);
    const taken = () => new ConflictError(`A user named '${username}' already exists.`, "username_taken");
    if (await this.store.get(NAMES, username)) throw taken();
    if (password !== undefined) checkPassword(password);
    const now = new Date();
    const user: User = {
      id: Bun.randomUUIDv7(),
      username,
      email: input.email,
      role: input.role,
      createdAt: now.toISOString(),
      createdBy: who.actor,
      disabledAt: null,
    };
    const invite = password === undefined ? this.mintLink("invite", user.id, now) : null;
    if (invite && deliver) await this.deliverFirst(who, "user.create", null, user, invite.link, deliver);
    const stored: StoredUser = {
      ...user,
      passwordHash: password === undefined ? null : await hashPassword(password),
      linkDigest: invite?.digest ?? null,
    };
    await this.store
      .write(
        [
          { op: "put", collection: USERS, id: user.id, data: stored, expect: "absent" },
          { op: "put", collection: NAMES, id: username, data: { id: user.id }, expect: "absent" },
          ...(invite ? [invite.op] : []),
          await this.rosterOp(),
          ...extra,
        ],
        [
          auditEntry(who, "user.create", "user", user.id, {
            username,
            email: user.email,
            role: user.role,
            invited: invite !== null,
            ...(invite && deliver ? { mailedTo: user.email } : {}),
          }),
        ],
      )
      .catch(async (error) => {
        throw error instanceof ConflictError && (await this.store.get(NAMES, username)) ? taken() : error;
      });
    return { user, invite: invite?.link ?? null };
  }

  /** Throws 409 when the change would leave no enabled admin. */
  private async keepAnAdmin(changing: string, after: StoredUser | null): Promise<void> {
    const admins = (await this.store.list<StoredUser>(USERS)).filter(({ data }) => data.id !== changing && data.role === "admin" && data.disabledAt === null);
    if (admins.length === 0 && !(after && after.role === "admin" && after.disabledAt === null)) {
      throw new ConflictError("This is the last enabled admin; make another user admin first.", "last_admin");
    }
  }

  async update(who: Actor, id: string, change: { role?: Role; email?: string; disabled?: boolean }): Promise<User> {
    const doc = await this.stored(id);
    const before = doc.data;
    requireWithin(who, before.role, `Changing user '${before.username}'`);
    if (change.role !== undefined) requireWithin(who, change.role, `Making a user ${change.role}`);
    const now = new Date().toISOString();
    const disabledAt = change.disabled === undefined ? before.disabledAt : change.disabled ? (before.disabledAt ?? now) : null;
    const after: StoredUser = { ...before, role: change.role ?? before.role, email: change.email ?? before.email, disabledAt };
    const roster = await this.rosterOp();
    if (before.role === "admin" && before.disabledAt === null) await this.keepAnAdmin(id, after);
    const endSessions = disabledAt !== null && before.disabledAt === null ? await this.sessions.endAllOps(id) : [];
    const details: Record<string, unknown> = { username: before.username };
    if (after.role !== before.role) details.role = { from: before.role, to: after.role };
    if (after.email !== before.email) details.email = { from: before.email, to: after.email };
    if (after.disabledAt !== before.disabledAt) details.disabled = after.disabledAt !== null;
    await this.store.write(
      [{ op: "put", collection: USERS, id, data: after, expect: doc.version }, roster, ...endSessions],
      [auditEntry(who, "user.update", "user", id, details)],
    );
    return publicUser(after);
  }

  async delete(who: Actor, id: string): Promise<void> {
    const doc = await this.stored(id);
    requireWithin(who, doc.data.role, `Deleting user '${doc.data.username}'`);
    const roster = await this.rosterOp();
    if (doc.data.role === "admin" && doc.data.disabledAt === null) await this.keepAnAdmin(id, null);
    await this.store.write(
      [
        { op: "delete", collection: USERS, id, expect: doc.version },
        { op: "delete", collection: NAMES, id: doc.data.username },
        ...(doc.data.linkDigest ? [{ op: "delete", collection: LINKS, id: doc.data.linkDigest } as WriteOp] : []),
        roster,
        ...(await this.sessions.endAllOps(id)),
      ],
      [auditEntry(who, "user.delete", "user", id, { username: doc.data.username })],
    );
  }

  /**
   * Mints a password-reset link (1 hour, single use), revoking any earlier
   * link; delivered first when `deliver` is given, so a failed delivery
   * leaves the earlier link working.
   */
  async mintReset(who: Actor, id: string, deliver?: LinkDelivery): Promise<UserLink> {
    const doc = await this.stored(id);
    requireWithin(who, doc.data.role, `A password reset for user '${doc.data.username}'`);
    const reset = this.mintLink("reset", id, new Date());
    if (deliver) await this.deliverFirst(who, "user.password_reset_link", id, publicUser(doc.data), reset.link, deliver);
    const after: StoredUser = { ...doc.data, linkDigest: reset.digest };
    await this.store.write(
      [
        { op: "put", collection: USERS, id, data: after, expect: doc.version },
        ...(doc.data.linkDigest ? [{ op: "delete", collection: LINKS, id: doc.data.linkDigest } as WriteOp] : []),
        reset.op,
      ],
      [
        auditEntry(who, "user.password_reset_link", "user", id, {
          username: doc.data.username,
          expiresAt: reset.link.expiresAt,
          ...(deliver ? { mailedTo: doc.data.email } : {}),
        }),
      ],
    );
    return reset.link;
  }

  /**
   * Redeems an invite or reset link: sets the password, consumes the link and
   * opens a session. A reset also ends every other session of the user.
   */
  async redeem(purpose: LinkPurpose, token: string, password: string, remoteAddr: string | null): Promise<LoggedIn> {
    if (tokenKind(token) !== "userLink") throw new InvalidLinkError();
    const digest = hashToken(token);
    const link = await this.store.get<LinkRecord>(LINKS, digest);
    if (!link || !digestsEqual(link.id, digest) || link.data.purpose !== purpose || Date.now() >= Date.parse(link.data.expiresAt)) {
      throw new InvalidLinkError();
    }
    const doc = await this.store.get<StoredUser>(USERS, link.data.userId);
    if (!doc || doc.data.disabledAt !== null || doc.data.linkDigest !== digest) throw new InvalidLinkError();
    checkPassword(password);
    const after: StoredUser = { ...doc.data, passwordHash: await this.gate.run(() => hashPassword(password)), linkDigest: null };
    const session = this.sessions.create(doc.id);
    const who = userActor(doc.data, remoteAddr);
    await this.store
      .write(
        [
          { op: "put", collection: USERS, id: doc.id, data: after, expect: doc.version },
          { op: "delete", collection: LINKS, id: digest, expect: link.version },
          ...(purpose === "reset" ? await this.sessions.endAllOps(doc.id) : []),
          ...session.ops,
        ],
        [
          auditEntry(who, purpose === "invite" ? "user.invite_accepted" : "user.password_reset", "user", doc.id, { username: doc.data.username }),
          auditEntry(who, "session.login", "session", doc.id, { username: doc.data.username, via: purpose }),
        ],
      )
      .catch((error) => {
        // Another request redeemed the same link first: it is single use.
        throw error instanceof ConflictError ? new InvalidLinkError() : error;
      });
    return { user: publicUser(after), session };
  }

  /**
   * Checks a username and password and opens a session. Unknown users, users
   * without a password yet and disabled users all take the same time and get
   * the same answer as a wrong password. A username past its failed log-ins
   * from this address is refused (429) before any hash, whether it exists or
   * not; from another address the same name still logs in with its password.
   */
  async login(username: string, password: string, remoteAddr: string | null): Promise<LoggedIn> {
    const name = username.toLowerCase();
    const throttled = `${name}\0${remoteAddr ?? ""}`;
    const wait = this.loginFailures.check(throttled);
    if (wait > 0) throw new RateLimitedError(`Too many failed log-ins for this username from this address; retry after ${wait} s.`, wait);
    // The dummy hash is awaited on every path, so the first call is no faster for unknown users either.
    const dummy = await this.dummy();
    const doc = await this.byName(username);
    const hash = doc?.data.passwordHash ?? dummy;
    const ok = (await this.gate.run(() => Bun.password.verify(password, hash)).catch(rethrowOverload)) && doc !== null && doc.data.passwordHash !== null;
    if (!ok || doc.data.disabledAt !== null) {
      this.loginFailures.take(throttled);
      const reason = !doc ? "unknown_user" : doc.data.passwordHash === null ? "no_password" : !ok ? "wrong_password" : "disabled";
      await this.store.write(
        [],
        [auditEntry({ actor: "anonymous", remoteAddr }, "session.login", "session", doc?.id ?? null, { username: name, reason }, "failure")],
      );
      throw new InvalidCredentialsError();
    }
    const session = this.sessions.create(doc.id);
    await this.store.write(session.ops, [auditEntry(userActor(doc.data, remoteAddr), "session.login", "session", doc.id, { username: doc.data.username })]);
    return { user: publicUser(doc.data), session };
  }

  async logout(principal: Principal): Promise<void> {
    if (principal.kind !== "user" || !principal.session) return;
    await this.store.write(this.sessions.endOps(principal.id, principal.session.id), [
      auditEntry(principal, "session.logout", "session", principal.id, { username: principal.name }),
    ]);
  }

  /** The principal a session cookie stands for, or null (unknown, expired, or the user is gone or disabled). */
  async authenticate(token: string, remoteAddr: string | null): Promise<Principal | null> {
    const session = await this.sessions.lookup(token);
    if (!session) return null;
    const doc = await this.store.get<StoredUser>(USERS, session.record.userId);
    if (!doc || doc.data.disabledAt !== null) return null;
    const { id, username, role } = doc.data;
    // Logging out, a reset, disabling and deleting end the session document; a role change is checked.
    const live = {
      standsOn: [`${SESSIONS}/${session.digest}`, `${USERS}/${id}`],
      watches: [`${USERS}/${id}`],
      check: async () => {
        const now = await this.store.get<StoredUser>(USERS, id);
        return now !== null && now.data.disabledAt === null && now.data.role === role;
      },
      endsAt: Date.parse(session.record.expiresAt),
    };
    return {
      kind: "user",
      id,
      name: username,
      scopes: new Set(ROLES[role]),
      actor: `user:${username}`,
      remoteAddr,
      session: { id: session.digest, csrfToken: csrfTokenFor(token) },
      live,
    };
  }

  /** Whether the web UI's first admin is still to be made: there is no user, and none was ever made. */
  async needsFirstAdmin(): Promise<boolean> {
    return (await this.store.get(BOOTSTRAP.collection, BOOTSTRAP.id)) === null && (await this.count()) === 0;
  }

  /**
   * On the first start with no users, creates `admin` (role admin) with
   * `password` (by default a random 20-character one) and returns it;
   * null otherwise, and when another replica made it first.
   */
  async bootstrapAdmin(password = randomPassword(20)): Promise<string | null> {
    if (!(await this.needsFirstAdmin())) return null;
    const marker: WriteOp = { op: "put", ...BOOTSTRAP, data: { at: new Date().toISOString() }, expect: "absent" };
    try {
      await this.create(SYSTEM_ACTOR, { username: "admin", email: "", role: "admin" }, password, [marker]);
    } catch (error) {
      // Replicas starting together on a fresh database: another one created the admin (and printed its password).
      if (error instanceof ConflictError) return null;
      throw error;
    }
    return password;
  }

  /** Deletes expired invite and reset links; answers how many. */
  async pruneLinks(now: Date): Promise<number> {
    const dead = (await this.store.list<LinkRecord>(LINKS)).filter(({ data }) => now.getTime() >= Date.parse(data.expiresAt));
    if (dead.length === 0) return 0;
    await this.store.write(dead.map(({ id }) => ({ op: "delete", collection: LINKS, id }) as WriteOp));
    return dead.length;
  }
}
