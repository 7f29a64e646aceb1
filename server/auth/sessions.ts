/**
 * Web UI sessions. A session is a random `svcus_` token that lives only in the
 * browser's HttpOnly cookie; the store keeps its SHA-256 digest under
 * `sessions/<digest>` plus an index `user_sessions/<userId>/<digest>`, so all of
 * a user's sessions can be ended in one write (password reset, disable, delete).
 *
 * Lifetime: a session ends after 12 hours without a request (idle) and at the
 * latest 7 days after login (absolute). `lastSeenAt` is written at most once a
 * minute, so a busy UI does not turn every read into a store write.
 *
 * CSRF: the token the UI must echo in `X-CSRF-Token` on writes is derived from
 * the session token (SHA-256 over a fixed label and the token), so it needs no
 * storage, differs per session, and cannot be computed without the cookie.
 */
import { createHash } from "node:crypto";
import { ConflictError } from "../errors.ts";
import type { Store, WriteOp } from "../store/store.ts";
import { digestsEqual, hashToken, mintToken, tokenKind } from "./tokens.ts";

export const SESSION_COOKIE = "svc_session";
export const SESSION_IDLE_MS = 12 * 60 * 60 * 1000;
export const SESSION_ABSOLUTE_MS = 7 * 24 * 60 * 60 * 1000;
const TOUCH_MS = 60 * 1000;

export const SESSIONS = "sessions";
const BY_USER = "user_sessions";

export interface SessionRecord {
  userId: string;
  createdAt: string;
  /** The absolute end; the idle end is lastSeenAt + 12 h. */
  expiresAt: string;
  lastSeenAt: string;
}

/** A session just created: the token goes into the cookie, the CSRF token into the answer. */
export interface NewSession {
  token: string;
  digest: string;
  csrfToken: string;
  expiresAt: string;
  ops: WriteOp[];
}

export function csrfTokenFor(sessionToken: string): string {
  return createHash("sha256").update("svc-csrf\0").update(sessionToken).digest("base64url");
}

export class Sessions {
  constructor(private readonly store: Store) {}

  /** The writes that create a session for a user; the caller adds them to its own write. */
  create(userId: string, now = new Date()): NewSession {
    const token = mintToken("session");
    const digest = hashToken(token);
    const expiresAt = new Date(now.getTime() + SESSION_ABSOLUTE_MS).toISOString();
    const record: SessionRecord = { userId, createdAt: now.toISOString(), expiresAt, lastSeenAt: now.toISOString() };
    return {
      token,
      digest,
      csrfToken: csrfTokenFor(token),
      expiresAt,
      ops: [
        { op: "put", collection: SESSIONS, id: digest, data: record, expect: "absent" },
        { op: "put", collection: BY_USER, id: `${userId}/${digest}`, data: {}, expect: "absent" },
      ],
    };
  }

  /** The live session a cookie token stands for (touching its idle clock), or null. */
  async lookup(token: string, now = new Date()): Promise<{ digest: string; record: SessionRecord } | null> {
    if (tokenKind(token) !== "session") return null;
    const digest = hashToken(token);
    const doc = await this.store.get<SessionRecord>(SESSIONS, digest);
    if (!doc || !digestsEqual(doc.id, digest)) return null;
    const record = doc.data;
    const t = now.getTime();
    if (t >= Date.parse(record.expiresAt) || t >= Date.parse(record.lastSeenAt) + SESSION_IDLE_MS) return null;
    if (t - Date.parse(record.lastSeenAt) >= TOUCH_MS) {
      const touched: SessionRecord = { ...record, lastSeenAt: now.toISOString() };
      // Guarded by version: a session ended meanwhile must not come back.
      await this.store.write([{ op: "put", collection: SESSIONS, id: digest, data: touched, expect: doc.version }]).catch((error) => {
        if (!(error instanceof ConflictError)) throw error;
      });
      return { digest, record: touched };
    }
    return { digest, record };
  }

  /** The writes that end one session. */
  endOps(userId: string, digest: string): WriteOp[] {
    return [
      { op: "delete", collection: SESSIONS, id: digest },
      { op: "delete", collection: BY_USER, id: `${userId}/${digest}` },
    ];
  }

  /** The writes that end every session of a user, but `keep` when given. */
  async endAllOps(userId: string, keep?: string): Promise<WriteOp[]> {
    const index = await this.store.list(BY_USER, { prefix: `${userId}/` });
    return index
      .map((doc) => doc.id.slice(userId.length + 1))
      .filter((digest) => digest !== keep)
      .flatMap((digest) => this.endOps(userId, digest));
  }

  async countOf(userId: string): Promise<number> {
    return (await this.store.list(BY_USER, { prefix: `${userId}/` })).length;
  }

  /** Deletes sessions past their idle or absolute end; answers how many. */
  async prune(now: Date): Promise<number> {
    const t = now.getTime();
    const dead = (await this.store.list<SessionRecord>(SESSIONS)).filter(
      ({ data }) => t >= Date.parse(data.expiresAt) || t >= Date.parse(data.lastSeenAt) + SESSION_IDLE_MS,
    );
    if (dead.length === 0) return 0;
    await this.store.write(dead.flatMap((doc) => this.endOps(doc.data.userId, doc.id)));
    return dead.length;
  }
}

/** The session token of a Cookie header, or null. */
export function sessionCookie(header: string | null): string | null {
  if (header === null) return null;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === SESSION_COOKIE) {
      const value = part.slice(eq + 1).trim();
      return value === "" ? null : value;
    }
  }
  return null;
}

/** Set-Cookie for a new session; `Secure` when the browser reached us over TLS. */
export function sessionSetCookie(token: string, secure: boolean): string {
  const maxAge = Math.floor(SESSION_ABSOLUTE_MS / 1000);
  return `${SESSION_COOKIE}=${token}; HttpOnly; SameSite=Strict; Path=/; Max-Age=${maxAge}${secure ? "; Secure" : ""}`;
}

/** Set-Cookie that makes the browser forget the session. */
export function sessionClearCookie(secure: boolean): string {
  return `${SESSION_COOKIE}=; HttpOnly; SameSite=Strict; Path=/; Max-Age=0${secure ? "; Secure" : ""}`;
}
