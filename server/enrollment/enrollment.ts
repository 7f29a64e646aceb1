/**
 * Enrollment tokens (`svcen_`): how a Runtime O collector or a host agent
 * first proves it may join. An operator mints one; it is shown once and
 * stored as a digest under `tokens/<sha256>`, so redeeming is one keyed read,
 * with its state in `enrollment_tokens/<id>`.
 *
 * - `opamp`: single-use. The first OpAMP handshake binds it to that
 *   instance_uid by compare-and-swap on the state document, so of two
 *   concurrent first contacts exactly one wins; any other instance is
 *   refused. Expiry bounds only that first use: once bound, the token is that
 *   instance's credential until revoked, because the OpAMP supervisor keeps
 *   it in its config file and dials with it at every start (v0.149.0 keeps
 *   offered connection settings in memory only: supervisor.go
 *   onOpampConnectionSettings), so an expiring bound token would cut off every
 *   installed collector at its next reconnect.
 * - `agent`: counts uses up to `maxUses` (null: unlimited, for DaemonSets).
 *
 * Revoking deletes the digest, so a revoked token is unknown at once; the
 * state document stays for the list and the audit trail.
 */
import { auditEntry, SYSTEM_ACTOR, type Actor } from "../audit/audit.ts";
import type { TokenRecord } from "../auth/service-accounts.ts";
import { digestsEqual, hashToken, mintToken, tokenKind, TOKENS } from "../auth/tokens.ts";
import type { Collectors } from "../collectors/collectors.ts";
import { ENROLLMENT_KINDS } from "../../shared/enrollment.ts";
import { ConflictError, NotFoundError, ValidationError } from "../errors.ts";
import { scan } from "../store/scan.ts";
import type { AuditEntry, Doc, Store, WriteOp } from "../store/store.ts";

export { ENROLLMENT_KINDS };
export type EnrollmentKind = (typeof ENROLLMENT_KINDS)[number];

const DAY = 86_400;
/** Expired or revoked tokens stay listed this long (the audit log keeps their story after). */
export const SPENT_TOKEN_RETENTION_DAYS = 30;
/** Seconds until expiry when `expiresIn` is not given: a day to install one collector, a week to roll out agents. */
export const DEFAULT_EXPIRES_IN: Record<EnrollmentKind, number> = { opamp: DAY, agent: 7 * DAY };
export const MAX_EXPIRES_IN = 365 * DAY;

export interface EnrollmentTokenView {
  id: string;
  kind: EnrollmentKind;
  /** The collector this token enrolls as: set at creation (pre-bound) or by bindCollector after the first handshake. */
  collectorId: string | null;
  environment: string | null;
  expiresAt: string;
  /** Always 1 for opamp; null means unlimited. */
  maxUses: number | null;
  uses: number;
  /** The OpAMP instance_uid that redeemed it first (opamp only). */
  boundInstanceUid: string | null;
  createdBy: string;
  createdAt: string;
  revokedAt: string | null;
}

/** As stored: the view plus the digest, so revoking needs no scan. */
interface StoredEnrollmentToken extends EnrollmentTokenView {
  tokenDigest: string;
  /** When `token.expiring` was announced for it (expiring()), so it is not looked at again. */
  expiringNoticeAt?: string;
}

export interface NewEnrollmentToken {
  kind: EnrollmentKind;
  collectorId?: string;
  environment?: string;
  /** Seconds from now, 1 to MAX_EXPIRES_IN. */
  expiresIn?: number;
  maxUses?: number | null;
}

const COLLECTION = "enrollment_tokens";

/** An OpAMP token its instance has redeemed: it no longer expires (see above). */
const boundOpamp = (t: StoredEnrollmentToken) => t.kind === "opamp" && t.boundInstanceUid !== null;

/** Not revoked, and not expired at `nowMs` unless bound. */
const liveAt = (t: StoredEnrollmentToken, nowMs: number) => t.revokedAt === null && (boundOpamp(t) || Date.parse(t.expiresAt) > nowMs);

/** An agent token with no use left. */
const usedUp = (t: StoredEnrollmentToken) => t.maxUses !== null && t.uses >= t.maxUses;

function view({ tokenDigest: _, expiringNoticeAt: __, ...token }: StoredEnrollmentToken): EnrollmentTokenView {
  return token;
}

export class Enrollment {
  constructor(
    private readonly store: Store,
    private readonly collectors: Collectors,
  ) {}

  /** Mints a token; the plain token is in this answer only. 404 when `collectorId` names no collector. */
  async create(who: Actor, input: NewEnrollmentToken): Promise<{ token: string; enrollmentToken: EnrollmentTokenView }> {
    const maxUses = checkInput(input);
    if (input.collectorId !== undefined) await this.collectors.get(input.collectorId);
    const now = new Date();
    const token = mintToken("enrollment");
    const stored: StoredEnrollmentToken = {
      id: Bun.randomUUIDv7(),
      kind: input.kind,
      collectorId: input.collectorId ?? null,
      environment: input.environment ?? null,
      expiresAt: new Date(now.getTime() + (input.expiresIn ?? DEFAULT_EXPIRES_IN[input.kind]) * 1000).toISOString(),
      maxUses,
      uses: 0,
      boundInstanceUid: null,
      createdBy: who.actor,
      createdAt: now.toISOString(),
      revokedAt: null,
      tokenDigest: hashToken(token),
    };
    const record: TokenRecord = { kind: "enrollment", subjectId: stored.id, createdAt: stored.createdAt };
    const { id, kind, collectorId, environment, expiresAt } = stored;
    const details = { kind, collectorId, environment, expiresAt, maxUses };
    await this.store.write(
      [
        { op: "put", collection: COLLECTION, id, data: stored, expect: "absent" },
        { op: "put", collection: TOKENS, id: stored.tokenDigest, data: record, expect: "absent" },
      ],
      [auditEntry(who, "enrollment.create", "enrollment_token", id, details, "success", now)],
    );
    return { token, enrollmentToken: view(stored) };
  }

  /** A page of tokens, oldest first, with their state; never the token or its digest. */
  async list(limit: number, after?: string): Promise<{ items: EnrollmentTokenView[]; nextCursor: string | null }> {
    const docs = await this.store.list<StoredEnrollmentToken>(COLLECTION, { limit: limit + 1, ...(after !== undefined ? { after } : {}) });
    const items = docs.slice(0, limit).map((doc) => view(doc.data));
    return { items, nextCursor: docs.length > limit ? items[items.length - 1]!.id : null };
  }

  /**
   * Deletes tokens expired or revoked more than SPENT_TOKEN_RETENTION_DAYS
   * before `now`, with their digests, so the list does not grow forever.
   */
  async prune(now: Date): Promise<number> {
    const cutoff = now.getTime() - SPENT_TOKEN_RETENTION_DAYS * DAY * 1000;
    let removed = 0;
    for await (const doc of scan<StoredEnrollmentToken>(this.store, COLLECTION)) {
      if (liveAt(doc.data, now.getTime())) continue;
      const spentAt = doc.data.revokedAt !== null ? Date.parse(doc.data.revokedAt) : Date.parse(doc.data.expiresAt);
      if (spentAt >= cutoff) continue;
      try {
        await this.store.write(
          [
            { op: "delete", collection: COLLECTION, id: doc.id, expect: doc.version },
            { op: "delete", collection: TOKENS, id: doc.data.tokenDigest },
          ],
          [auditEntry(SYSTEM_ACTOR, "enrollment.prune", "enrollment_token", doc.id, { kind: doc.data.kind }, "success", now)],
        );
        removed++;
      } catch (error) {
        // Changed meanwhile: the next run looks again.
        if (!(error instanceof ConflictError)) throw error;
      }
    }
    return removed;
  }

  /**
   * Announces each token that could still enroll (not revoked, not expired, a
   * use left) once it is within its notice of expiry: `withinMs`, or a quarter
   * of its lifetime when that is shorter (a token made to live a day is
   * announced 6 h before its end with the default 24 h). `announce` runs
   * first and the token is marked after (a versioned write), so a crash in
   * between announces it again rather than never: the announcement must be
   * idempotent (Webhooks.emit keys it by token and expiry). Two replicas may
   * both announce it; one mark lands. Resolves to the number announced here.
   */
  async expiring(now: Date, withinMs: number, announce: (token: EnrollmentTokenView) => Promise<unknown>): Promise<number> {
    let announced = 0;
    for await (const doc of scan<StoredEnrollmentToken>(this.store, COLLECTION)) {
      const t = doc.data;
      const expiresAt = Date.parse(t.expiresAt);
      const notice = Math.min(withinMs, (expiresAt - Date.parse(t.createdAt)) / 4);
      if (t.expiringNoticeAt !== undefined || !liveAt(t, now.getTime()) || expiresAt - now.getTime() > notice) continue;
      const spent = t.kind === "opamp" ? t.boundInstanceUid !== null : usedUp(t);
      if (spent) continue;
      await announce(view(t));
      announced++;
      try {
        await this.store.write([{ op: "put", collection: COLLECTION, id: doc.id, data: { ...t, expiringNoticeAt: now.toISOString() }, expect: doc.version }]);
      } catch (error) {
        // Marked by another replica, or changed (redeemed, revoked): the next sweep looks again, and a repeat is deduped.
        if (!(error instanceof ConflictError)) throw error;
      }
    }
    return announced;
  }

  /** The token stops working at once. Revoking a revoked token changes nothing. */
  async revoke(who: Actor, id: string): Promise<void> {
    for (;;) {
      const doc = await this.store.get<StoredEnrollmentToken>(COLLECTION, id);
      if (!doc) throw new NotFoundError("Enrollment token", id);
      if (doc.data.revokedAt !== null) return;
      const revoked = { ...doc.data, revokedAt: new Date().toISOString() };
      const audit = auditEntry(who, "enrollment.revoke", "enrollment_token", id, { kind: revoked.kind });
      const deleteDigest: WriteOp = { op: "delete", collection: TOKENS, id: revoked.tokenDigest };
      if (await this.replace(doc, revoked, audit, [deleteDigest])) return;
    }
  }

  /**
   * Redeems an OpAMP enrollment token for `instanceUid`: null when the token is
   * unknown, revoked, of another kind, bound to another instance, or expired
   * before this instance first redeemed it.
   * The first redemption binds it and counts the use; the same instance may
   * redeem again any number of times without a write.
   */
  /** Whether a token is a live OpAMP enrollment token, without redeeming it (checked at a WebSocket upgrade, before the instance_uid is known, and on each message after). */
  async usableForOpamp(token: string): Promise<boolean> {
    return (await this.opampToken(token)) !== null;
  }

  /** A live OpAMP enrollment token's id and end (null once bound: until revoked), without redeeming it: a session opened with it lasts until then. */
  async opampToken(token: string): Promise<{ tokenId: string; expiresAt: string | null } | null> {
    const id = await this.lookup(token);
    const doc = id === null ? null : await this.live(id, "opamp");
    return doc ? { tokenId: doc.id, expiresAt: boundOpamp(doc.data) ? null : doc.data.expiresAt } : null;
  }

  /**
   * Which collector a live OpAMP enrollment token enrolls as (null: not yet
   * bound to one), without redeeming it; undefined when the token is not
   * live. OpAMP asks before redeeming for an instance it already knows.
   */
  async opampCollector(token: string): Promise<string | null | undefined> {
    const id = await this.lookup(token);
    const doc = id === null ? null : await this.live(id, "opamp");
    return doc ? doc.data.collectorId : undefined;
  }

  async redeemOpamp(token: string, instanceUid: string): Promise<{ tokenId: string; collectorId: string | null; environment: string | null } | null> {
    const id = await this.lookup(token);
    if (id === null) return null;
    for (;;) {
      const doc = await this.live(id, "opamp");
      if (!doc) return null;
      const { boundInstanceUid, collectorId, environment } = doc.data;
      const grant = { tokenId: id, collectorId, environment };
      if (boundInstanceUid !== null) return boundInstanceUid === instanceUid ? grant : null;
      const bound = { ...doc.data, boundInstanceUid: instanceUid, uses: doc.data.uses + 1 };
      const audit = auditEntry(SYSTEM_ACTOR, "enrollment.redeem", "enrollment_token", id, { instanceUid });
      if (await this.replace(doc, bound, audit)) return grant;
    }
  }

  /**
   * Records the collector an OpAMP token's instance became, so a reconnect
   * with the same token maps to the same collector. 409 when the token
   * already belongs to another collector.
   */
  async bindCollector(tokenId: string, collectorId: string): Promise<void> {
    for (;;) {
      const doc = await this.store.get<StoredEnrollmentToken>(COLLECTION, tokenId);
      if (!doc) throw new NotFoundError("Enrollment token", tokenId);
      const current = doc.data.collectorId;
      if (current === collectorId) return;
      if (current !== null) {
        throw new ConflictError(`Enrollment token '${tokenId}' already enrolls collector '${current}'.`, "enrollment_token_bound");
      }
      const audit = auditEntry(SYSTEM_ACTOR, "enrollment.bind", "enrollment_token", tokenId, { collectorId });
      if (await this.replace(doc, { ...doc.data, collectorId }, audit)) return;
    }
  }

  /**
   * The agent token this string is, when it is one and not revoked. Expiry and
   * maxUses limit new enrollments only: an agent already enrolled with the
   * token reconnects with it for as long as it is not revoked.
   */
  async agentToken(token: string): Promise<{ tokenId: string; environment: string | null } | null> {
    const id = await this.lookup(token);
    if (id === null) return null;
    const doc = await this.store.get<StoredEnrollmentToken>(COLLECTION, id);
    if (doc?.data.kind !== "agent" || doc.data.revokedAt !== null) return null;
    return { tokenId: id, environment: doc.data.environment };
  }

  /** Whether a host could enroll with this agent token now (live, a use left), without redeeming it: install.sh asks before the agent exists. */
  async usableForAgent(token: string): Promise<{ environment: string | null } | null> {
    const id = await this.lookup(token);
    const doc = id === null ? null : await this.live(id, "agent");
    if (!doc || usedUp(doc.data)) return null;
    return { environment: doc.data.environment };
  }

  /** Redeems an agent enrollment token, counting one use; null when unknown, revoked, expired, of another kind or used up. */
  async redeemAgent(token: string): Promise<{ tokenId: string; environment: string | null } | null> {
    const id = await this.lookup(token);
    if (id === null) return null;
    for (;;) {
      const doc = await this.live(id, "agent");
      if (!doc) return null;
      if (usedUp(doc.data)) return null;
      const { uses, environment } = doc.data;
      const audit = auditEntry(SYSTEM_ACTOR, "enrollment.redeem", "enrollment_token", id, { uses: uses + 1 });
      if (await this.replace(doc, { ...doc.data, uses: uses + 1 }, audit)) return { tokenId: id, environment };
    }
  }

  /** The id of the enrollment token this string is, by one keyed read of its digest. */
  private async lookup(token: string): Promise<string | null> {
    if (tokenKind(token) !== "enrollment") return null;
    const digest = hashToken(token);
    const record = await this.store.get<TokenRecord>(TOKENS, digest);
    if (record?.data.kind !== "enrollment" || !digestsEqual(record.id, digest)) return null;
    return record.data.subjectId;
  }

  /** The token's state when it is of `kind`, not revoked and not expired. */
  private async live(id: string, kind: EnrollmentKind): Promise<Doc<StoredEnrollmentToken> | null> {
    const doc = await this.store.get<StoredEnrollmentToken>(COLLECTION, id);
    return doc && doc.data.kind === kind && liveAt(doc.data, Date.now()) ? doc : null;
  }

  /** Writes `data` over `doc` if nobody changed it meanwhile; false when the race was lost (the caller re-reads). */
  private async replace(doc: Doc<StoredEnrollmentToken>, data: StoredEnrollmentToken, audit: AuditEntry, extra: WriteOp[] = []): Promise<boolean> {
    try {
      await this.store.write([{ op: "put", collection: COLLECTION, id: doc.id, data, expect: doc.version }, ...extra], [audit]);
      return true;
    } catch (error) {
      if (error instanceof ConflictError && error.code === "version_conflict") return false;
      throw error;
    }
  }
}

/** Rules across fields that a schema cannot say; returns the effective maxUses. */
function checkInput(input: NewEnrollmentToken): number | null {
  const problems: { path: string; message: string }[] = [];
  if (input.expiresIn !== undefined && !(Number.isInteger(input.expiresIn) && input.expiresIn >= 1 && input.expiresIn <= MAX_EXPIRES_IN)) {
    problems.push({ path: "expiresIn", message: `must be a whole number of seconds from 1 to ${MAX_EXPIRES_IN} (365 days)` });
  }
  if (input.kind === "opamp" && input.maxUses !== undefined && input.maxUses !== 1) {
    problems.push({ path: "maxUses", message: "must be 1 or left out: an opamp token binds to the first collector instance that uses it" });
  } else if (typeof input.maxUses === "number" && !(Number.isInteger(input.maxUses) && input.maxUses >= 1)) {
    problems.push({ path: "maxUses", message: "must be a whole number of at least 1, or null for unlimited" });
  }
  if (input.kind === "agent" && input.collectorId !== undefined) {
    problems.push({ path: "collectorId", message: "only an opamp token can be bound to a collector; agent tokens enroll hosts" });
  }
  const first = problems[0];
  if (first) throw new ValidationError(`The enrollment token is not valid: ${first.path}: ${first.message}.`, problems);
  return input.kind === "opamp" ? 1 : input.maxUses === undefined ? 1 : input.maxUses;
}
