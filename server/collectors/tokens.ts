/**
 * Per-collector tokens (`svcct_`): the Bearer credential of a Runtime R
 * collector's remote-config polls and of every collector's own-metrics push
 * to /v1/metrics. A collector has at most one: `collector_tokens/<collectorId>`
 * names the digest of the current token, and minting puts the new digest and
 * deletes the old one in the same store write, so there is no moment when
 * both work (spec §5 rule 2).
 *
 * Only digests are stored, so no one can be handed an existing token again;
 * whoever needs the plaintext mints a new one. The OpAMP server, offering a
 * collector `own_metrics` connection settings, mints one as SYSTEM_ACTOR when
 * `has()` says the collector has none, and subscribes with `onRotate()` to push
 * a token minted through the API. Only the process that mints holds the
 * plaintext, so only its listeners hear of it.
 *
 * `verify` runs on every poll and push: it answers from memory after the first
 * read of a digest. The change feed drops a cached digest the moment it is
 * deleted, whether this process or another replica rotated it.
 */
import { auditEntry, type Actor } from "../audit/audit.ts";
import { TOKENS, type TokenRecord } from "../auth/service-accounts.ts";
import { digestsEqual, hashToken, mintToken, tokenKind } from "../auth/tokens.ts";
import { ConflictError, NotFoundError } from "../errors.ts";
import type { Store, WriteOp } from "../store/store.ts";
import type { Collectors } from "./collectors.ts";

/** Which digest is a collector's current token. */
interface CurrentToken {
  digest: string;
  createdAt: string;
  createdBy: string;
}

const CURRENT = "collector_tokens";

export type RotateListener = (collectorId: string, token: string) => void;

export class CollectorTokens {
  /** Token digest → collector id, for digests known to be live. */
  private readonly cache = new Map<string, string>();
  /**
   * Bumped on every change to the token collection: a read that started
   * before a change may have seen a digest that is gone now, so it must not
   * fill the cache.
   */
  private epoch = 0;
  private readonly listeners = new Set<RotateListener>();
  private readonly unwatch: () => void;

  constructor(
    private readonly store: Store,
    private readonly collectors: Collectors,
  ) {
    this.unwatch = store.watch(
      (changes) => {
        for (const change of changes) if (change.collection === TOKENS) this.forget(change.id);
      },
      // Deletions may have been missed: every cached digest must be read again.
      () => {
        this.epoch++;
        this.cache.clear();
      },
    );
  }

  /**
   * Mints the collector's new token; its previous one stops working in the
   * same write. Listeners hear of it before this resolves. 404 for an unknown
   * collector; 409 when another rotation of the same collector won the race.
   */
  async mint(who: Actor, collectorId: string): Promise<{ token: string; collectorId: string; createdAt: string }> {
    await this.collectors.get(collectorId);
    const previous = await this.store.get<CurrentToken>(CURRENT, collectorId);
    const token = mintToken("collector");
    const digest = hashToken(token);
    const createdAt = new Date().toISOString();
    const current: CurrentToken = { digest, createdAt, createdBy: who.actor };
    const record: TokenRecord = { kind: "collector", subjectId: collectorId, createdAt };
    const ops: WriteOp[] = [
      { op: "put", collection: CURRENT, id: collectorId, data: current, expect: previous?.version ?? "absent" },
      { op: "put", collection: TOKENS, id: digest, data: record, expect: "absent" },
    ];
    if (previous) ops.push({ op: "delete", collection: TOKENS, id: previous.data.digest });
    const audit = auditEntry(who, "collector.token.rotate", "collector", collectorId, { replaced: previous !== null });
    await this.store.write(ops, [audit]).catch((error) => {
      if (error instanceof ConflictError && error.code === "version_conflict") {
        throw new ConflictError("This collector's token was rotated by another request at the same time; mint again.", "token_rotated");
      }
      throw error;
    });
    // Adapters whose change feed is asynchronous would leave the old digest cached until it arrives.
    if (previous) this.forget(previous.data.digest);
    for (const listener of this.listeners) listener(collectorId, token);
    return { token, collectorId, createdAt };
  }

  /** The id of the collector this token belongs to, or null (unknown, rotated away, or its collector deleted). */
  async verify(token: string): Promise<string | null> {
    if (tokenKind(token) !== "collector") return null;
    const digest = hashToken(token);
    let collectorId = this.cache.get(digest);
    if (collectorId === undefined) {
      const epoch = this.epoch;
      const record = await this.store.get<TokenRecord>(TOKENS, digest);
      if (!record || record.data.kind !== "collector" || !digestsEqual(record.id, digest)) return null;
      collectorId = record.data.subjectId;
      if (epoch === this.epoch) this.cache.set(digest, collectorId);
    }
    return (await this.collectorExists(collectorId)) ? collectorId : null;
  }

  /** Whether the collector has a live token (minted and not yet rotated away). */
  async has(collectorId: string): Promise<boolean> {
    return (await this.store.get(CURRENT, collectorId)) !== null;
  }

  /**
   * Calls `listener` with the plaintext of every token this process mints.
   * Listeners run inside mint and must not throw. Returns an unsubscribe.
   */
  onRotate(listener: RotateListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  close(): void {
    this.unwatch();
    this.listeners.clear();
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
