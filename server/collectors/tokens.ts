/**
 * A collector's two credentials, each kept the same way:
 *
 * - its control token (`svcct_`): the Bearer credential of a Runtime R
 *   collector's remote-config polls, bootstrap file and own-metrics push,
 *   and of an OpAMP agent that takes OpAMP connection settings. It fetches
 *   the collector's config, secrets and all.
 * - its metrics credential (`svccm_`): what the OpAMP own-metrics offer
 *   carries (server/opamp/settings.ts), accepted by /v1/metrics only. The
 *   OpAMP supervisor writes the offer's headers into the collector's config
 *   (supervisor.go setupOwnTelemetry at v0.149.0), so a changed header
 *   restarts the collector; keeping this credential apart means rotating the
 *   control token changes nothing the collector runs, and what sits in the
 *   collector's config can do no more than report that collector's rates.
 *
 * A collector has at most one of each: `<collection>/<collectorId>` names the
 * digest of the current one, and minting puts the new digest and deletes the
 * old one in the same store write, so there is no moment when both work: a
 * token given out before a rotation is dead from that write on.
 *
 * Beside the digest the document keeps the token sealed with the server's
 * secrets key (server/secrets), so every replica, and this one after a
 * restart, can offer a collector the token it already has instead of minting
 * another. Verification only ever uses the digest.
 *
 * `verify` runs on every poll and push: it answers from memory after the first
 * read of a digest. The change feed drops a cached digest the moment it is
 * deleted, and a cached plaintext the moment its document changes, whether
 * this process or another replica rotated it; `onRotate` listeners hear of
 * every rotation the same way.
 */
import { auditEntry, type Actor } from "../audit/audit.ts";
import type { TokenRecord } from "../auth/service-accounts.ts";
import { digestsEqual, hashToken, mintToken, tokenKind, TOKENS } from "../auth/tokens.ts";
import { ConflictError, NotFoundError } from "../errors.ts";
import type { Secrets } from "../secrets/secrets.ts";
import type { Store, WriteOp } from "../store/store.ts";
import type { Collectors } from "./collectors.ts";

/** Which digest is a collector's current token, and the token sealed (absent on tokens minted before sealing). */
interface CurrentToken {
  digest: string;
  sealed?: string;
  createdAt: string;
  createdBy: string;
}

/** Each credential: its token kind, the collection naming each collector's current one, and the audit action of a mint. */
export const COLLECTOR_CREDENTIALS = {
  control: { kind: "collector", collection: "collector_tokens", action: "collector.token.rotate" },
  metrics: { kind: "collectorMetrics", collection: "collector_metrics_tokens", action: "collector.metrics-token.rotate" },
} as const;
export type CollectorCredential = keyof typeof COLLECTOR_CREDENTIALS;

export const CURRENT_TOKENS = COLLECTOR_CREDENTIALS.control.collection;
export const METRICS_TOKENS = COLLECTOR_CREDENTIALS.metrics.collection;

export type RotateListener = (collectorId: string) => void;

export class CollectorTokens {
  /** Token digest → collector id, for digests known to be live. */
  private readonly cache = new Map<string, string>();
  /** Collector id → plaintext of its current token, as opened from the store. */
  private readonly plain = new Map<string, string>();
  /**
   * Bumped on every change to the token collection: a read that started
   * before a change may have seen a digest that is gone now, so it must not
   * fill the cache.
   */
  private epoch = 0;
  private readonly listeners = new Set<RotateListener>();
  private readonly unwatch: () => void;

  /** The token kind, the collection of current tokens and the audit action of this credential. */
  private readonly spec: (typeof COLLECTOR_CREDENTIALS)[CollectorCredential];

  /** `credential`: which of the collector's two credentials this keeps. */
  constructor(
    private readonly store: Store,
    private readonly collectors: Collectors,
    private readonly secrets: Secrets,
    credential: CollectorCredential = "control",
  ) {
    this.spec = COLLECTOR_CREDENTIALS[credential];
    const collection = this.spec.collection;
    this.unwatch = store.watch(
      (changes) => {
        for (const change of changes) {
          if (change.collection === TOKENS) this.forget(change.id);
          if (change.collection === collection) {
            this.epoch++;
            this.plain.delete(change.id);
            if (change.op === "put") for (const listener of this.listeners) listener(change.id);
          }
        }
      },
      // Rotations may have been missed: every cached digest and plaintext must be read again.
      () => {
        this.epoch++;
        this.cache.clear();
        const rotated = [...this.plain.keys()];
        this.plain.clear();
        for (const collectorId of rotated) for (const listener of this.listeners) listener(collectorId);
      },
    );
  }

  /** What a sealed token is bound to: it opens only in its own collector's document. */
  private sealContext(collectorId: string): string {
    return `${this.spec.collection}/${collectorId}`;
  }

  /**
   * Mints the collector's new token; its previous one stops working in the
   * same write. Listeners hear of it through the change feed (on the embedded
   * store before this resolves). 404 for an unknown
   * collector; 409 when another rotation of the same collector won the race.
   */
  async mint(who: Actor, collectorId: string): Promise<{ token: string; collectorId: string; createdAt: string }> {
    await this.collectors.get(collectorId);
    const collection = this.spec.collection;
    const previous = await this.store.get<CurrentToken>(collection, collectorId);
    const token = mintToken(this.spec.kind);
    const digest = hashToken(token);
    const createdAt = new Date().toISOString();
    const current: CurrentToken = { digest, sealed: this.secrets.seal(token, this.sealContext(collectorId)), createdAt, createdBy: who.actor };
    const record: TokenRecord = { kind: this.spec.kind, subjectId: collectorId, createdAt };
    const ops: WriteOp[] = [
      { op: "put", collection, id: collectorId, data: current, expect: previous?.version ?? "absent" },
      { op: "put", collection: TOKENS, id: digest, data: record, expect: "absent" },
    ];
    if (previous) ops.push({ op: "delete", collection: TOKENS, id: previous.data.digest });
    const audit = auditEntry(who, this.spec.action, "collector", collectorId, { replaced: previous !== null });
    await this.store.write(ops, [audit]).catch((error) => {
      if (error instanceof ConflictError && error.code === "version_conflict") {
        throw new ConflictError("This collector's token was rotated by another request at the same time; mint again.", "token_rotated");
      }
      throw error;
    });
    // Adapters whose change feed is asynchronous would leave the old digest cached until it arrives.
    if (previous) this.forget(previous.data.digest);
    this.epoch++;
    this.plain.set(collectorId, token);
    return { token, collectorId, createdAt };
  }

  /** The id of the collector this token belongs to, or null (unknown, rotated away, or its collector deleted). */
  async verify(token: string): Promise<string | null> {
    if (tokenKind(token) !== this.spec.kind) return null;
    const digest = hashToken(token);
    let collectorId = this.cache.get(digest);
    if (collectorId === undefined) {
      const epoch = this.epoch;
      const record = await this.store.get<TokenRecord>(TOKENS, digest);
      if (!record || record.data.kind !== this.spec.kind || !digestsEqual(record.id, digest)) return null;
      collectorId = record.data.subjectId;
      if (epoch === this.epoch) this.cache.set(digest, collectorId);
    }
    return (await this.collectorExists(collectorId)) ? collectorId : null;
  }

  /** Whether the collector has a live token (minted and not yet rotated away). */
  async has(collectorId: string): Promise<boolean> {
    return (await this.store.get(this.spec.collection, collectorId)) !== null;
  }

  /**
   * The plaintext of the collector's current token, opened from the store;
   * null when it has none, or only one minted before tokens were sealed (it
   * keeps working; whoever needs the plaintext mints anew). Throws
   * SecretsError when it was sealed under a key this server does not hold.
   */
  async current(collectorId: string): Promise<string | null> {
    const cached = this.plain.get(collectorId);
    if (cached !== undefined) return cached;
    const epoch = this.epoch;
    const doc = await this.store.get<CurrentToken>(this.spec.collection, collectorId);
    if (!doc?.data.sealed) return null;
    const token = this.secrets.openString(doc.data.sealed, this.sealContext(collectorId));
    // A token that no longer matches its digest is never handed out.
    if (!digestsEqual(hashToken(token), doc.data.digest)) return null;
    if (epoch === this.epoch) this.plain.set(collectorId, token);
    return token;
  }

  /**
   * Calls `listener` with the id of every collector whose token was rotated,
   * here or on another replica (read the new one with `current`). Listeners
   * run inside the change feed and must not throw. Returns an unsubscribe.
   */
  onRotate(listener: RotateListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  close(): void {
    this.unwatch();
    this.listeners.clear();
    this.plain.clear();
  }

  private forget(digest: string): void {
    this.epoch++;
    this.cache.delete(digest);
  }

  /** Deleting a collector leaves its token digest behind; the registry decides. */
  private async collectorExists(id: string): Promise<boolean> {
    try {
      await this.collectors.get(id);
      return true;
    } catch (error) {
      if (error instanceof NotFoundError) return false;
      throw error;
    }
  }
}
