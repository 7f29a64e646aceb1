/**
 * The rollout as the collector channels see it (delivery.ts `Delivery`):
 * each collector's target, read from the store and kept in memory while the
 * change feed says it stands, the body sent with its secrets in, and what
 * the collector reports back moving the target's state (docs/architecture.md
 * "Status model"). Publish and rollback (rollout.ts, history.ts) only write
 * targets; the feed tells this side.
 *
 * Secrets: a rendered config holds each secret as its marker (render/secrets.ts),
 * so what is stored, hashed and shown never holds a plaintext. Only the body
 * handed to a collector's channel (`delivered`) has them in, kept in memory.
 * What a collector reports back (its effective config, its errors) may quote
 * them, so it is redacted before it is stored (redactions.ts).
 */
import type { Logger } from "pino";
import { auditEntry, SYSTEM_ACTOR } from "../audit/audit.ts";
import { COLLECTORS, type Collectors } from "../collectors/collectors.ts";
import type { ConfigState } from "../../shared/rollouts.ts";
import { BoundedMap } from "../lib/bounded-map.ts";
import { deliverable } from "../render/secrets.ts";
import { MissingSecretError, type SecretVault } from "../secrets/vault.ts";
import { Coalescer } from "../store/coalesce.ts";
import type { Change, Store } from "../store/store.ts";
import type { Delivery, TargetListener } from "./delivery.ts";
import { DriftJudge } from "./drift-judge.ts";
import { EffectiveIntakeGate, MAX_EFFECTIVE_CONFIG_BYTES, type EffectiveIntake } from "./effective-intake.ts";
import {
  CONFIGS,
  EFFECTIVE,
  HISTORY,
  historyId,
  RENDERED,
  type CollectorConfig,
  type ConfigReport,
  type EffectiveConfig,
  type HistoryEntry,
} from "./records.ts";
import { Redactions } from "./redactions.ts";
import type { RenderedConfig } from "./renderer.ts";
import { storedRendered, TEMPLATES, type TemplateSource } from "./stored-rendered.ts";
import type { TemplateText } from "../render/attributes.ts";

/**
 * Rendered configs kept decoded in memory (a change, which only the secrets
 * upgrade makes, drops one), and their delivered bodies, bounded by count.
 * Collectors that share a config share one entry, so a few thousand cover
 * every fleet without attribute references. With them nearly every collector
 * has its own, read once per delivery (a poll that runs it needs only the
 * hash): keeping 20,000 of those cost about 60 MiB more steady RSS at 20,000
 * collectors (bench/fleet.ts 20000 --inject: 832 against 773 MiB) and saved no read.
 */
const RENDERED_CACHE = 2_000;

/** Templates kept in memory: one per render key with attribute references, a few per pipeline. */
const TEMPLATE_CACHE = 1_000;

/**
 * What a channel offers a collector of its target: the config (by hash), how
 * often it was offered again (handler.ts sends `hash#retries`), and whether it
 * is withheld (the collector rolled back from it). A state change (outdated,
 * applying, current, failed) or a drift check leaves it as it was.
 */
function offerOf(target: CollectorConfig | null): string | null {
  return target === null ? null : `${target.targetHash}#${target.retries ?? 0}${target.collectorRollback ? "#withheld" : ""}`;
}

/**
 * `cache`'s read of `key`, or `read()` kept there while in flight and after.
 * Nothing stored (yet) or a failed read is not kept: the next ask reads again.
 */
function readThrough<T>(cache: BoundedMap<string, Promise<T | null>>, key: string, read: () => Promise<T | null>): Promise<T | null> {
  const cached = cache.get(key);
  if (cached) return cached;
  const reading = read();
  cache.set(key, reading);
  const forget = () => void (cache.get(key) === reading && cache.delete(key));
  reading.then((found) => found === null && forget(), forget);
  return reading;
}

/** A target's fields with the "could not be delivered" mark dropped: it was delivered, or the collector reports on it. */
function deliveredTarget(target: CollectorConfig): Omit<CollectorConfig, "undelivered"> {
  const { undelivered: _, ...rest } = target;
  return rest;
}

/** Whether two versions of a target say the same of what the collector reported: the same target, state and error. */
function sameReport(a: CollectorConfig, b: CollectorConfig): boolean {
  return a.targetSeq === b.targetSeq && a.targetHash === b.targetHash && a.state === b.state && a.error === b.error && !b.undelivered;
}

export class TargetDelivery implements Delivery {
  /** Known targets; null caches "nothing published yet", which unpublished collectors poll for. */
  private readonly targets = new Map<string, CollectorConfig | null>();
  /** Bumped whenever cached targets change: a read that started before must not fill the cache. */
  private targetsEpoch = 0;
  /** Targets another replica changed, being read again (`reread`): the read that may fill each one's cache. */
  private readonly rereads = new Map<string, object>();
  /** Reads in flight count as cached: a fleet's sessions asking for one new config at once cause one read. */
  private readonly renderedByHash = new BoundedMap<string, Promise<RenderedConfig | null>>(RENDERED_CACHE);
  /** Templates filled configs are stored by (stored-rendered.ts), by id; reads in flight count as cached. */
  private readonly templates = new BoundedMap<string, Promise<TemplateText | null>>(TEMPLATE_CACHE);
  /** Bodies with their secrets in, per rendered hash: memory only, never stored or logged. */
  private readonly deliveredByHash = new BoundedMap<string, Promise<string>>(RENDERED_CACHE);
  /** Cached targets a report was recorded against, target and history entry alike: `report` answers their repeats from memory. */
  private readonly reported = new WeakSet<CollectorConfig>();
  /** Rendered hashes whose failed delivery was logged, so a fleet on one config logs it once. */
  private readonly undeliverableLogged = new Set<string>();
  private readonly redactions: Redactions;
  private readonly configWrites: Coalescer<CollectorConfig>;
  private readonly historyWrites: Coalescer<HistoryEntry>;
  private readonly unwatch: () => void;
  private readonly targetListeners = new Set<TargetListener>();
  private readonly effectiveIntake = new EffectiveIntakeGate();
  private readonly drift: DriftJudge;

  constructor(
    private readonly store: Store,
    private readonly collectors: Pick<Collectors, "get">,
    private readonly vault: Pick<SecretVault, "open">,
    private readonly log: Logger,
  ) {
    this.configWrites = new Coalescer(store, CONFIGS, 50, log);
    this.historyWrites = new Coalescer(store, HISTORY, 50, log);
    this.redactions = new Redactions(
      store,
      vault,
      async (id) => (await this.targetDoc(id))?.targetSeq ?? 0,
      (hash) => this.rendered(hash),
    );
    this.drift = new DriftJudge(store, this.configWrites, this, this.effectiveIntake, log);
    // Targets change by publish, rollback or a collector's report on any replica: the cache takes what the feed says,
    // all of it again after a resync. Listeners hear of a change once the cache holds it (or dropped it), so what they read is the new one.
    this.unwatch = store.watch(
      (changes) => {
        const targets: Change[] = [];
        for (const c of changes) {
          // A deleted collector's secrets are no longer needed here (a new target is told by its seq).
          if (c.collection === COLLECTORS && c.op === "delete") this.redactions.forget(c.id);
          // Rendered configs change only when the secrets upgrade takes plaintext out of one (delivered bytes stay the same).
          if (c.collection === RENDERED) {
            this.renderedByHash.delete(c.id);
            this.redactions.forget();
          }
          // A template is stored once (guarded "absent") and stored again only by the secrets upgrade:
          // the configs filled from it change as the rendered ones above do.
          if (c.collection === TEMPLATES && c.version !== 1) {
            this.templates.delete(c.id);
            this.renderedByHash.clear();
            this.redactions.forget();
          }
          if (c.collection === CONFIGS) targets.push(c);
        }
        if (targets.length > 0) this.targetsChanged(targets);
      },
      () => {
        this.targetsEpoch++;
        this.targets.clear();
        this.rereads.clear();
        this.renderedByHash.clear();
        this.templates.clear();
        this.redactions.forget();
        for (const listener of this.targetListeners) listener(undefined, true);
      },
    );
  }

  /**
   * Targets the feed announced. One this replica wrote comes with its document:
   * cached as it is, no read. Another replica's is dropped; when one was cached,
   * all of them are read again in one call and listeners told whether the offer
   * changed; when none was, they are told at once that it did (they read it if
   * they need it).
   */
  private targetsChanged(changes: Change[]): void {
    const told: [string, boolean][] = [];
    const reread = new Map<string, CollectorConfig | null>();
    for (const c of changes) {
      const before = this.targets.get(c.id);
      this.targetsEpoch++;
      this.rereads.delete(c.id);
      if (c.data !== undefined) {
        const after = c.data as CollectorConfig;
        // A write that keeps what a recorded report said (the drift verdict) keeps it recorded.
        if (before && this.reported.has(before) && sameReport(before, after)) this.reported.add(after);
        this.targets.set(c.id, after);
        told.push([c.id, before === undefined || offerOf(before) !== offerOf(after)]);
      } else {
        this.targets.delete(c.id);
        if (before !== undefined && c.op === "put") reread.set(c.id, before);
        else if (!reread.has(c.id)) told.push([c.id, true]);
      }
    }
    for (const [id, changed] of told) this.tell(id, changed);
    if (reread.size > 0) void this.reread(reread);
  }

  /** Reads targets another replica changed, in one call, and tells listeners whether each one's offer changed from `cached`. */
  private async reread(cached: Map<string, CollectorConfig | null>): Promise<void> {
    const read = {};
    for (const id of cached.keys()) this.rereads.set(id, read);
    const docs = await this.store.getMany<CollectorConfig>(CONFIGS, [...cached.keys()]).catch((error: unknown) => {
      this.log.warn({ err: error }, "rollout: reading targets another replica changed failed; their listeners read them");
      return null;
    });
    for (const [id, before] of cached) {
      // A later change of it was heard meanwhile (and told), or a resync: this read says nothing new.
      if (this.rereads.get(id) !== read) continue;
      this.rereads.delete(id);
      const after = docs ? (docs.get(id)?.data ?? null) : undefined;
      if (after !== undefined) this.targets.set(id, after);
      this.tell(id, after === undefined || offerOf(before) !== offerOf(after));
    }
  }

  private tell(collectorId: string, offerChanged: boolean): void {
    for (const listener of this.targetListeners) listener(collectorId, offerChanged);
  }

  /**
   * Calls `listener` with a collector's id when its target changes (publish,
   * rollback, a delivery or report moving its state, on any replica) and
   * whether what a channel offers of it changed (`offerOf`), and with
   * undefined when any may have (the change feed resynced). Returns the
   * unsubscribe.
   */
  onTargetChanged(listener: TargetListener): () => void {
    this.targetListeners.add(listener);
    return () => this.targetListeners.delete(listener);
  }

  async close(): Promise<void> {
    this.unwatch();
    this.targetListeners.clear();
    await this.drift.close();
    await Promise.all([this.configWrites.close(), this.historyWrites.close()]);
  }

  /**
   * The rendered config a collector should run, or null when nothing was
   * published to it. Served from memory after the first read: every remote
   * config poll asks.
   */
  async target(collectorId: string): Promise<{ target: CollectorConfig; rendered: RenderedConfig } | null> {
    const target = await this.targetDoc(collectorId);
    if (target === null) return null;
    const rendered = await this.rendered(target.targetHash);
    return rendered ? { target, rendered } : null;
  }

  /**
   * Where the collector's target stands, without its rendered bytes: a poll
   * from a collector that already runs it needs no more (from memory).
   */
  targetOf(collectorId: string): Promise<CollectorConfig | null> {
    return this.targetDoc(collectorId);
  }

  private async targetDoc(collectorId: string): Promise<CollectorConfig | null> {
    let target = this.targets.get(collectorId);
    if (target === undefined) {
      const epoch = this.targetsEpoch;
      target = (await this.store.get<CollectorConfig>(CONFIGS, collectorId))?.data ?? null;
      if (epoch === this.targetsEpoch) this.targets.set(collectorId, target);
    }
    return target;
  }

  private rendered(hash: string): Promise<RenderedConfig | null> {
    return readThrough(this.renderedByHash, hash, () => storedRendered(this.store, hash, this.template));
  }

  /** A template, read once while it stands. */
  private readonly template: TemplateSource = (id) =>
    readThrough(this.templates, id, async () => (await this.store.get<TemplateText>(TEMPLATES, id))?.data ?? null);

  /**
   * The body to send the collector: `rendered` with its secrets in, opened
   * from the vault, kept in memory per hash (never stored, never logged).
   * Null when a secret it names cannot be opened here: nothing may be sent,
   * so the target turns failed and `undelivered` with the reason (ids, no
   * values), the first failure per config is logged, and the next contact
   * tries again.
   */
  async delivered(collectorId: string, rendered: RenderedConfig): Promise<string | null> {
    const { hash } = rendered;
    let body = this.deliveredByHash.get(hash);
    if (!body) {
      body = deliverable(rendered.runtime, rendered.body, (id) => this.vault.open(id));
      this.deliveredByHash.set(hash, body);
    }
    try {
      const text = await body;
      this.undeliverableLogged.delete(hash);
      return text;
    } catch (error) {
      if (this.deliveredByHash.get(hash) === body) this.deliveredByHash.delete(hash);
      if (!(error instanceof MissingSecretError)) throw error;
      if (!this.undeliverableLogged.has(hash)) {
        this.undeliverableLogged.add(hash);
        this.log.error(
          { collectorId, hash, secretId: error.id, err: error },
          "rollout: a config names a secret this server cannot open, so it is not delivered (the collector keeps the config it runs); check that every replica has the same secrets key",
        );
      }
      const message = `Not delivered: ${error.message}. The collector keeps the config it runs; delivery is tried again at its next contact.`;
      this.configWrites
        .update(collectorId, (current) =>
          current && current.targetHash === hash && !(current.undelivered && current.error === message)
            ? { ...current, state: "failed", error: message, undelivered: true, updatedAt: new Date().toISOString() }
            : null,
        )
        .catch((err) => this.log.warn({ err, collectorId }, "rollout: recording an undelivered config failed"));
      return null;
    }
  }

  /** `text` with the collector's delivered secrets and any svc token taken out (redactions.ts). */
  redact(collectorId: string, text: string): Promise<string> {
    return this.redactions.redact(collectorId, text);
  }

  /**
   * Moves the collector's config state by what it reports. Reports about a
   * config other than its current target are stale and change nothing, but
   * one: a collector that applied a config it ran before while its target
   * was applying or had failed went back on its own (the OpAMP supervisor's
   * last-known-good), see `collectorRolledBack`.
   */
  async report(collectorId: string, report: ConfigReport): Promise<void> {
    const state: ConfigState = report.state === "applied" ? "current" : report.state;
    // An OpAMP HTTP agent repeats its status on every poll: once this process has seen the target and
    // its history entry agree with it, a repeat is answered from memory (no read, no drift check).
    const cached = this.targets.get(collectorId);
    if (cached && this.reported.has(cached) && cached.targetHash === report.hash && cached.state === state && report.state !== "failed") return;
    if (report.state === "applied" && (await this.collectorRolledBack(collectorId, report.hash))) return;
    // A collector's message may quote its config, secrets too.
    const error = report.state === "failed" ? (report.error ? await this.redact(collectorId, report.error) : "the collector could not apply the config") : null;
    const now = new Date().toISOString();
    let seq: number | null = null;
    let moved = false;
    await this.configWrites.update(collectorId, (current) => {
      if (!current || current.targetHash !== report.hash) return null;
      seq = current.targetSeq;
      moved = !(current.state === state && current.error === error && !current.undelivered);
      return moved ? { ...deliveredTarget(current), state, error, updatedAt: now } : null;
    });
    // Judged when the collector comes to run its target; again only when it reports another effective config (setEffective).
    if (moved && state === "current") this.drift.schedule(collectorId);
    if (seq !== null) {
      await this.historyWrites.update(historyId(collectorId, seq), (entry) => {
        if (!entry || entry.hash !== report.hash || (entry.state === state && (entry.error ?? null) === error)) return null;
        const { error: _, ...rest } = entry;
        return error === null ? { ...rest, state } : { ...rest, state, error };
      });
      // Both are stored as the report says (the cache holds the target as written): its repeats change nothing.
      const held = this.targets.get(collectorId);
      if (held && held.targetSeq === seq && held.targetHash === report.hash && held.state === state && held.error === null && !held.undelivered) {
        this.reported.add(held);
      }
    }
  }

  /**
   * The collector says it applied `hash`, an earlier config of its own, while
   * its target was applying or had failed: it rolled back by itself. The
   * target turns failed, says so, and is not offered again (until a new
   * target or an explicit retry), so a config that fails is not re-sent in a
   * loop; its history entry reads "rolled back by the collector". Answers
   * whether that is what happened.
   */
  private async collectorRolledBack(collectorId: string, hash: string): Promise<boolean> {
    const target = await this.targetDoc(collectorId);
    if (!target || target.targetHash === hash) return false;
    if (target.collectorRollback?.toHash === hash) return true;
    // Only an applying or failed target can be gone back from. While it is outdated (not sent yet) or current, an
    // older config's report is stale: decided from memory, as an OpAMP HTTP agent repeats it on every poll until it
    // takes the new one, unless a write of the target is still settling (a delivery moving it to applying).
    if ((target.state === "outdated" || target.state === "current") && !this.configWrites.queued(collectorId)) return false;
    const history = (await this.store.list<HistoryEntry>(HISTORY, { prefix: `${collectorId}/` })).map((d) => d.data);
    const earlier = [...history].reverse().find((entry) => entry.seq < target.targetSeq && entry.hash === hash);
    if (!earlier) return false;
    const now = new Date().toISOString();
    let reason: string | null = null;
    let moved = false;
    let already = false;
    // Decided on the latest state, writes still being coalesced included: an outdated target was not
    // received yet, so an older config reported then is only a stale report.
    await this.configWrites.update(collectorId, (current) => {
      if (!current || current.targetSeq !== target.targetSeq) return null;
      already = current.collectorRollback !== undefined;
      if (already || (current.state !== "applying" && current.state !== "failed")) return null;
      moved = true;
      reason = current.state === "failed" ? current.error : null;
      const error = `The collector rolled back to the config of #${earlier.seq} after this one failed${reason ? `: ${reason}` : ""}.`;
      return { ...deliveredTarget(current), state: "failed", error, collectorRollback: { toSeq: earlier.seq, toHash: hash, at: now }, updatedAt: now };
    });
    if (!moved) return already;
    await this.historyWrites.update(historyId(collectorId, target.targetSeq), (entry) =>
      entry ? { ...entry, state: "failed", ...(reason ? { error: reason } : {}), collectorRolledBackTo: earlier.seq } : null,
    );
    await this.store.write(
      [],
      [auditEntry(SYSTEM_ACTOR, "config.collector_rollback", "collector", collectorId, { fromSeq: target.targetSeq, toSeq: earlier.seq })],
    );
    return true;
  }

  /** A collector was sent its target: outdated (or undelivered until now) becomes applying until it reports. */
  async fetched(collectorId: string, hash: string): Promise<void> {
    await this.configWrites.update(collectorId, (current) => {
      if (!current || current.targetHash !== hash) return null;
      if (current.undelivered) return { ...deliveredTarget(current), state: "applying", error: null, updatedAt: new Date().toISOString() };
      return current.state === "outdated" ? { ...current, state: "applying", updatedAt: new Date().toISOString() } : null;
    });
  }

  /**
   * Stores the config the collector says it runs (shown beside the target),
   * redacted: it holds what was delivered; its drift is judged afterwards
   * (drift-judge.ts). Which reports are looked at is effective-intake.ts's:
   * one equal to the last kept is "unchanged"; a changed one past the
   * collector's rate is "limited" (not read; the channel asks for it again
   * later, and drift waits for it); one over MAX_EFFECTIVE_CONFIG_BYTES is
   * "refused": the last one kept stays, with the refusal and its reason
   * beside it, so a collector cannot grow the state by reporting.
   */
  async setEffective(collectorId: string, files: EffectiveConfig["files"]): Promise<EffectiveIntake> {
    const admission = this.effectiveIntake.admit(collectorId, files, () => this.drift.schedule(collectorId));
    if (admission.kind === "unchanged" || admission.kind === "limited") return admission.kind;
    const now = new Date().toISOString();
    if (admission.kind === "refused") {
      const kept = (await this.store.get<EffectiveConfig>(EFFECTIVE, collectorId))?.data;
      const reason = `The collector reported an effective config of ${admission.bytes} bytes, more than the ${MAX_EFFECTIVE_CONFIG_BYTES} svc keeps; it was not kept.`;
      const data: EffectiveConfig = { collectorId, files: kept?.files ?? [], reportedAt: kept?.reportedAt ?? now, refused: { at: now, reason } };
      await this.store.write([{ op: "put", collection: EFFECTIVE, id: collectorId, data }]);
      this.log.warn({ collectorId, bytes: admission.bytes }, "an effective config report was refused: too large");
      this.drift.schedule(collectorId);
      return "refused";
    }
    const redacted = await Promise.all(files.map(async (file) => ({ ...file, body: await this.redact(collectorId, file.body) })));
    const data: EffectiveConfig = { collectorId, files: redacted, reportedAt: now };
    await this.store.write([{ op: "put", collection: EFFECTIVE, id: collectorId, data }]);
    this.effectiveIntake.stored(collectorId, admission.digest);
    this.drift.schedule(collectorId);
    return "stored";
  }

  /** Whether the collector's next effective-config report would be looked at: a channel that skipped one asks for it again then. */
  effectiveWelcome(collectorId: string): boolean {
    return this.effectiveIntake.welcome(collectorId);
  }

  /** The config the collector last said it runs, as kept (redacted), for the API; null before it reported one. */
  async effective(collectorId: string): Promise<EffectiveConfig | null> {
    await this.collectors.get(collectorId);
    return (await this.store.get<EffectiveConfig>(EFFECTIVE, collectorId))?.data ?? null;
  }
}
