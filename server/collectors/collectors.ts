/**
 * The collector registry: records created by the API (or by an OpAMP
 * collector's first contact), their labels, and their status as reported by
 * the control channels. Every change is audited with the write itself.
 */
import type { CollectorStatus } from "../../shared/collector-status.ts";
import type { Collector } from "../../shared/collectors.ts";
import type { TagFilter } from "../../shared/collector-filter.ts";
import type { Matcher } from "../../shared/matchers.ts";
import type { ManagementMode } from "../../shared/vocabulary.ts";
import { auditEntry, type Actor } from "../audit/audit.ts";
import { AppError, ConflictError, NotFoundError, UnavailableError, ValidationError } from "../errors.ts";
import type { AuditEntry, Doc, Store, WriteOp } from "../store/store.ts";
import { ScanBudgetError } from "../lib/next-turn.ts";
import { RecordView, type ViewListener } from "../store/view.ts";
import { Admission } from "../lib/admission.ts";
import { AttributeIndex, type IndexAnswer } from "./attribute-index.ts";
import { FleetCounts } from "./fleet-counts.ts";
import { sameReported, VIRTUAL_KEYS } from "./attributes.ts";
import { refuseUntrusted, TrustedAttributes } from "./trust.ts";

export interface NewCollector {
  name: string;
  environment?: string | null;
  managementMode?: ManagementMode;
  tags?: Record<string, string>;
  /** The collector whose OpAMP instance UID this one presented (a clone), Collector.cloneOf. */
  cloneOf?: Collector["cloneOf"];
}

export type CollectorPatch = Partial<Pick<Collector, "name" | "environment" | "managementMode" | "tags">>;

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** A bulk tag edit: keys to set (or overwrite) and keys to remove, on every collector a predicate selects. */
export interface TagEdit {
  set: Record<string, string>;
  remove: string[];
}

/** What a bulk tag edit did: how many collectors matched and how many of them changed. */
export interface TagEditResult {
  matched: number;
  changed: number;
}

/** Most tags one collector may hold (the API's StringMap bound). */
const MAX_TAGS = 64;
/** Collectors written per store write (and audit entry) in a bulk edit. */
const BULK_CHUNK = 500;

/** `tags` after a bulk edit, or null when it would not change them. */
function applyTagEdit(tags: Record<string, string>, edit: TagEdit): Record<string, string> | null {
  const next: Record<string, string> = { ...tags, ...edit.set };
  for (const key of edit.remove) delete next[key];
  const keys = Object.keys(next);
  if (keys.length === Object.keys(tags).length && keys.every((key) => tags[key] === next[key])) return null;
  return next;
}

export const COLLECTORS = "collectors";
const COLLECTION = COLLECTORS;

/** A collector as it is and as a write would leave it (`before` null: the write creates it). */
export interface CollectorEdit {
  before: Collector | null;
  after: Collector;
}

/**
 * Writes that land in the same store write as an edit (an attribute rollout,
 * rollout/attribute-rollout.ts), and the edited collectors they handled:
 * those are not announced to onAttributesChanged listeners.
 */
export interface EditWrites {
  ops: WriteOp[];
  audit: AuditEntry[];
  handled: string[];
}

/** Checks edits before they are written; throws (an AppError) to refuse them all, or answers what to write with them. */
export type VetEdits = (edits: CollectorEdit[]) => Promise<EditWrites | undefined>;

/** Hears the ids of collectors whose attributes (or what else a render reads of the record) were just written here. */
export type AttributesListener = (ids: string[]) => void;

/** Which collectors: a predicate over each record, or attribute matchers (all must hold) answered from the attribute index. */
export type Selector = ((collector: Collector) => boolean) | readonly Matcher[];

/** What of a list's filter the attribute index answers or narrows; the predicate checks the rest. */
export interface Indexed {
  /** Attribute matchers, all must hold: answered from the index, not by the predicate. */
  matchers?: readonly Matcher[];
  /** The filter's tags (tagFilters), which the predicate checks too: their postings only narrow what it is run on. */
  tags?: readonly TagFilter[];
}

/**
 * Listing a matcher's selection costs about this many steps of a walk of the view per id (a map lookup per matcher,
 * and a sort): the selection is listed when that costs less than the walk that would fill the page.
 */
const LIST_COST = 4;

/** Fleet walks (`Collectors.scan`) running at once, and waiting for their turn. */
export const SCANS = { running: 1, waiting: 16 };
/** Most of the server's time one walk may take (its slices added up). */
export const SCAN_BUDGET_MS = 3000;

/** `run`, its ScanBudgetError answered as the 422 a caller can act on. */
async function budgeted<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof ScanBudgetError)) throw error;
    throw new AppError(
      422,
      "matchers_too_costly",
      `Evaluating these matchers over the fleet took more than ${SCAN_BUDGET_MS / 1000} s of the server's time and was stopped; use fewer or smaller regular expressions, or select with = on tags.`,
    );
  }
}

export class Collectors {
  private readonly view: RecordView<Collector>;
  /** The attributes matchers read, kept current with the view (attribute-index.ts). */
  private readonly index = new AttributeIndex();
  /** The dashboard's counts and offline / reporting-only ids, kept current with the view (fleet-counts.ts). */
  private readonly counts = new FleetCounts();
  private readonly attributeListeners = new Set<AttributesListener>();
  /** The reported keys matchers may read (trust.ts); `configured` is fleet.trustedAttributes. */
  readonly trust: TrustedAttributes;
  /** Fleet walks with a caller's filter (`scan`). */
  private readonly scans = new Admission(
    SCANS,
    (busy) => new UnavailableError(`${busy} collector lists or matcher evaluations are running or waiting; try again shortly.`, 2, "collector_scans_busy"),
  );

  constructor(
    private readonly store: Store,
    configured: readonly string[] = [],
  ) {
    this.view = new RecordView(store, COLLECTION, [this.index, this.counts]);
    this.trust = new TrustedAttributes(store, configured);
  }

  close(): void {
    this.view.close();
    this.trust.close();
    this.attributeListeners.clear();
  }

  /**
   * Calls `listener` after a write on this replica that may change what a
   * render reads of a collector (attributeValues, referenceValues, name,
   * mode, reported version): create, update, report, and each chunk of a bulk
   * tag edit; not delete. Only the writing replica hears it, so one replica
   * acts on each change. Returns the unsubscribe.
   */
  onAttributesChanged(listener: AttributesListener): () => void {
    this.attributeListeners.add(listener);
    return () => this.attributeListeners.delete(listener);
  }

  private attributesChanged(ids: string[], handled: readonly string[] = []): void {
    const skip = new Set(handled);
    const left = ids.filter((id) => !skip.has(id));
    if (left.length === 0) return;
    for (const listener of this.attributeListeners) listener(left);
  }

  /** `vet` may refuse the record before it is written, or answer writes to land with it. */
  async create(who: Actor, input: NewCollector, vet?: VetEdits): Promise<Collector> {
    const now = new Date().toISOString();
    const collector: Collector = {
      id: Bun.randomUUIDv7(),
      name: input.name.trim(),
      environment: input.environment ?? null,
      managementMode: input.managementMode ?? "opamp",
      tags: input.tags ?? {},
      ...(input.cloneOf ? { cloneOf: input.cloneOf } : {}),
      status: "pending",
      lastSeen: null,
      health: null,
      createdAt: now,
      updatedAt: now,
    };
    const writes = await vet?.([{ before: null, after: collector }]);
    const [doc] = await this.store.write(
      [{ op: "put", collection: COLLECTION, id: collector.id, data: collector, expect: "absent" }, ...(writes?.ops ?? [])],
      [
        auditEntry(who, "collector.create", "collector", collector.id, {
          name: collector.name,
          ...(input.cloneOf ? { cloneOf: input.cloneOf.collectorId } : {}),
        }),
        ...(writes?.audit ?? []),
      ],
    );
    this.view.apply(doc as Doc<Collector>);
    this.attributesChanged([collector.id], writes?.handled);
    return collector;
  }

  /** The record and its version as this process holds it, without waiting or reading: what a coalesced writer may start from. */
  held(id: string): { version: number; data: Collector } | undefined {
    return this.view.entry(id);
  }

  async get(id: string): Promise<Collector> {
    await this.ready();
    const collector = this.view.get(id);
    if (!collector) throw new NotFoundError("Collector", id);
    return collector;
  }

  /** The record as a patch would leave it, writing nothing, with the version it was read at and the fields it changes. */
  async patchEdit(id: string, patch: CollectorPatch): Promise<{ edit: CollectorEdit; version: number; changed: CollectorPatch }> {
    const doc = await this.store.get<Collector>(COLLECTION, id);
    if (!doc) throw new NotFoundError("Collector", id);
    const changed = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as CollectorPatch;
    if (changed.name !== undefined) changed.name = changed.name.trim();
    return { edit: { before: doc.data, after: { ...doc.data, ...changed, updatedAt: new Date().toISOString() } }, version: doc.version, changed };
  }

  /** `vet` may refuse the change before it is written, or answer writes to land with it. */
  async update(who: Actor, id: string, patch: CollectorPatch, vet?: VetEdits): Promise<Collector> {
    const { edit, version, changed } = await this.patchEdit(id, patch);
    const collector = edit.after;
    const writes = await vet?.([edit]);
    const [written] = await this.store.write(
      [{ op: "put", collection: COLLECTION, id, data: collector, expect: version }, ...(writes?.ops ?? [])],
      [auditEntry(who, "collector.update", "collector", id, { changed: Object.keys(changed) }), ...(writes?.audit ?? [])],
    );
    this.view.apply(written as Doc<Collector>);
    this.attributesChanged([id], writes?.handled);
    return collector;
  }

  /**
   * Keeps what the collector reports about itself (already bounded by
   * attributes.ts `boundReported`). Compared against the in-memory record
   * first, so a report that changes nothing costs no store access: channels
   * may call this on every full description or poll. A concurrent edit of
   * the record is retried once. Answers whether it wrote.
   */
  async report(who: Actor, id: string, reported: Record<string, string>): Promise<boolean> {
    await this.ready();
    const cached = this.view.get(id);
    if (cached && sameReported(cached.reported, reported)) return false;
    for (let attempt = 0; attempt < 2; attempt++) {
      const doc = await this.store.get<Collector>(COLLECTION, id);
      if (!doc || sameReported(doc.data.reported, reported)) return false;
      const collector: Collector = { ...doc.data, reported, updatedAt: new Date().toISOString() };
      try {
        const [written] = await this.store.write(
          [{ op: "put", collection: COLLECTION, id, data: collector, expect: doc.version }],
          [auditEntry(who, "collector.update", "collector", id, { changed: ["reported"], reported: Object.keys(reported).length })],
        );
        this.view.apply(written as Doc<Collector>);
        this.attributesChanged([id]);
        return true;
      } catch (error) {
        if (!(error instanceof ConflictError) || attempt === 1) throw error;
      }
    }
    return false;
  }

  /**
   * What a bulk tag edit would do, writing nothing: how many collectors
   * `matches` selects, and each one whose tags would change, as it is and as
   * it would be. Refused as editTags refuses.
   */
  async tagEdits(select: Selector, edit: TagEdit): Promise<{ matched: number; edits: CollectorEdit[] }> {
    const virtual = [...Object.keys(edit.set), ...edit.remove].filter((key) => (VIRTUAL_KEYS as readonly string[]).includes(key));
    if (virtual.length > 0) {
      throw new ValidationError(`${virtual[0]} is a virtual attribute, computed from the record; it cannot be a tag.`, [
        { path: Object.keys(edit.set).includes(virtual[0]!) ? `set.${virtual[0]}` : "remove", message: "is a virtual attribute" },
      ]);
    }
    const both = edit.remove.filter((key) => key in edit.set);
    if (both.length > 0) throw new ValidationError(`The tag ${both[0]} is both set and removed.`, [{ path: "remove", message: `${both[0]} is also in set` }]);
    // Every collector acknowledged on any replica before the edit, not only what this replica's feed has brought so far.
    await this.view.current();
    const selected = (
      typeof select === "function"
        ? await this.scan(select, Number.POSITIVE_INFINITY)
        : await this.scan(() => true, Number.POSITIVE_INFINITY, undefined, { matchers: select })
    ).items;
    const edits = selected.flatMap((collector) => {
      const tags = applyTagEdit(collector.tags, edit);
      return tags === null ? [] : [{ before: collector, after: { ...collector, tags } }];
    });
    const over = edits.find((e) => Object.keys(e.after.tags).length > MAX_TAGS);
    if (over) {
      const id = over.after.id;
      throw new ValidationError(`Collector ${id} would hold more than ${MAX_TAGS} tags.`, [
        { path: "set", message: `collector ${id} would hold more than ${MAX_TAGS} tags` },
      ]);
    }
    return { matched: selected.length, edits };
  }

  /**
   * Sets and removes tags on every collector `select` selects (tagEdits),
   * audited (`collector.tags`) naming the matchers, the edit and the
   * collectors it changed. Collectors whose tags would not change are not
   * written. `vet` sees the records as read just before the write and may
   * refuse them all, or answer writes (an attribute rollout) that land in one
   * store write with every record, which expects the versions it vetted.
   * Without such writes, records go in writes of BULK_CHUNK collectors, each
   * with its audit entry, a chunk that meets a concurrent write read again
   * and retried once.
   */
  async editTags(who: Actor, select: Selector, edit: TagEdit, describe: Record<string, unknown>, vet?: VetEdits): Promise<TagEditResult> {
    const { matched, edits } = await this.tagEdits(select, edit);
    const audit = (ids: string[]) =>
      auditEntry(who, "collector.tags", "collector", null, { ...describe, set: edit.set, remove: edit.remove, collectorIds: ids });
    const now = new Date().toISOString();
    // Read again, so what is vetted is what is written.
    const docs = [
      ...(
        await this.store.getMany<Collector>(
          COLLECTION,
          edits.map((e) => e.after.id),
        )
      ).values(),
    ];
    const fresh = docs.flatMap((doc) => {
      const tags = applyTagEdit(doc.data.tags, edit);
      return tags === null ? [] : [{ doc, after: { ...doc.data, tags, updatedAt: now } }];
    });
    const writes = await vet?.(fresh.map(({ doc, after }) => ({ before: doc.data, after })));
    if (writes) {
      const ids = fresh.map(({ doc }) => doc.id);
      if (ids.length === 0 && writes.ops.length === 0) return { matched, changed: 0 };
      const written = await this.store.write(
        [...fresh.map(({ doc, after }) => ({ op: "put" as const, collection: COLLECTION, id: doc.id, data: after, expect: doc.version })), ...writes.ops],
        [...(ids.length > 0 ? [audit(ids)] : []), ...writes.audit],
      );
      for (const doc of written) if (doc.collection === COLLECTION) this.view.apply(doc as Doc<Collector>);
      this.attributesChanged(ids, writes.handled);
      return { matched, changed: ids.length };
    }
    let changed = 0;
    for (let at = 0; at < fresh.length; at += BULK_CHUNK) {
      const ids = fresh.slice(at, at + BULK_CHUNK).map(({ doc }) => doc.id);
      for (let attempt = 0; ; attempt++) {
        const chunk = await this.store.getMany<Collector>(COLLECTION, ids);
        const stamp = new Date().toISOString();
        const ops = [];
        for (const doc of chunk.values()) {
          const tags = applyTagEdit(doc.data.tags, edit);
          if (tags === null) continue;
          ops.push({ op: "put" as const, collection: COLLECTION, id: doc.id, data: { ...doc.data, tags, updatedAt: stamp }, expect: doc.version });
        }
        if (ops.length === 0) break;
        try {
          const written = await this.store.write(ops, [audit(ops.map((op) => op.id))]);
          for (const doc of written) this.view.apply(doc as Doc<Collector>);
          this.attributesChanged(ops.map((op) => op.id));
          changed += ops.length;
          break;
        } catch (error) {
          if (!(error instanceof ConflictError) || attempt === 1) throw error;
        }
      }
    }
    return { matched, changed };
  }

  async delete(who: Actor, id: string): Promise<void> {
    const doc = await this.store.get<Collector>(COLLECTION, id);
    if (!doc) throw new NotFoundError("Collector", id);
    await this.store.write(
      [{ op: "delete", collection: COLLECTION, id, expect: doc.version }],
      [auditEntry(who, "collector.delete", "collector", id, { name: doc.data.name })],
    );
    this.view.remove(id);
  }

  /**
   * One page in id (creation) order of the collectors that `matches` (filter.ts's
   * compileFilter) and every one of `indexed.matchers` selects; `after` is the last
   * id of the previous page. The same answer as `matches` with the matchers in it,
   * but the matchers are answered from the attribute index, and `matches` runs only
   * on what they and `indexed.tags` select.
   */
  async list(matches: (collector: Collector) => boolean, limit: number, after?: string, indexed: Indexed = {}): Promise<Page<Collector>> {
    return this.scan(matches, limit, after, indexed);
  }

  /**
   * A caller's filter over the fleet may run their regular expressions on
   * every collector: the walk yields (RecordView.scan), at most SCANS.running
   * walks run at once (the event loop is held for that many slices at most,
   * however many are asked for; past SCANS.waiting more, 503), and one that
   * takes more than SCAN_BUDGET_MS of the server's time is stopped (422).
   * With `indexed`, the matchers are answered from the index (AttributeIndex.answer),
   * and `matches` runs only on the collectors they and the tags select.
   */
  private async scan(matches: (collector: Collector) => boolean, limit: number, after?: string, indexed: Indexed = {}): Promise<Page<Collector>> {
    const { matchers = [], tags = [] } = indexed;
    await this.ready();
    return budgeted(() =>
      this.scans.run(async () => {
        if (matchers.length === 0 && tags.length === 0) return this.view.scan(matches, limit, after, SCAN_BUDGET_MS);
        const started = performance.now();
        const answer = await this.index.answer(matchers, this.trust.keys(), SCAN_BUDGET_MS, tags);
        if (this.listCheaper(answer, limit)) return this.listed(answer, matches, limit, after);
        const left = SCAN_BUDGET_MS - (performance.now() - started);
        return this.view.scan((c) => answer.holds(c.id) && matches(c), limit, after, Math.max(left, 0));
      }),
    );
  }

  /**
   * Whether each collector of the view, as it is now, satisfies every one of
   * `matchers`: compileFilter's `match` answered from the
   * attribute index, for a pass over the fleet that reads more than the matchers
   * (a publish's `match` scope). Bounded as a list is (422 past SCAN_BUDGET_MS).
   */
  async selects(matchers: readonly Matcher[]): Promise<(collector: Collector) => boolean> {
    if (matchers.length === 0) return () => true;
    await this.ready();
    const answer = await budgeted(() => this.index.answer(matchers, this.trust.keys(), SCAN_BUDGET_MS));
    return (collector) => answer.holds(collector.id);
  }

  /** Whether listing the answer's smallest selection costs less than walking the view until the page is full. */
  private listCheaper(answer: IndexAnswer, limit: number): boolean {
    if (answer.listable === null) return false;
    const { size } = answer.listable;
    const fleet = this.index.size;
    return size === 0 || size * LIST_COST < Math.min(fleet, (limit * fleet) / size);
  }

  /** The page (as RecordView.page answers it) of the answer's smallest selection: listed, checked, sorted. */
  private listed(answer: IndexAnswer, matches: (collector: Collector) => boolean, limit: number, after?: string): Page<Collector> {
    const ids: string[] = [];
    for (const id of answer.listable!.ids()) if ((after === undefined || id > after) && answer.holds(id)) ids.push(id);
    ids.sort();
    const items: Collector[] = [];
    for (const id of ids) {
      const record = this.view.get(id);
      if (record === undefined || !matches(record)) continue;
      if (items.length === limit) return { items, nextCursor: items[limit - 1]!.id };
      items.push(record);
    }
    return { items, nextCursor: null };
  }

  /** Every collector, in id order. */
  async all(): Promise<Collector[]> {
    await this.ready();
    return this.view.page(() => true, Number.POSITIVE_INFINITY).items;
  }

  /** Every collector acknowledged on any replica before the call, in id order: for a fleet-wide operation such as a publish. */
  async allAcknowledged(): Promise<Collector[]> {
    await Promise.all([this.view.current(), this.ready()]);
    return this.view.page(() => true, Number.POSITIVE_INFINITY).items;
  }

  /**
   * Calls `visit` with every collector, in id order and uncopied (do not keep
   * or change them), giving the event loop a turn every SCAN_SLICE_MS: for a
   * periodic check of the whole fleet, which at 100,000 collectors held the
   * loop for a tenth of a second in one piece.
   */
  async walk(visit: (collector: Collector) => void): Promise<void> {
    await this.ready();
    await this.view.scan((collector) => {
      visit(collector);
      return false;
    }, Number.POSITIVE_INFINITY);
  }

  /**
   * Calls `visit` with every collector in the in-memory view, unordered and
   * uncopied (do not keep or change them): one pass for fleet summaries such
   * as the dashboard, with no store reads.
   */
  async each(visit: (collector: Collector) => void): Promise<void> {
    await this.ready();
    for (const collector of this.view.all()) visit(collector);
  }

  /**
   * 400 naming each matcher (`path[i]`) on a key only collectors' reports hold
   * and no admin trusts (trust.ts refuseUntrusted): such a matcher would read nothing.
   */
  async refuseUntrusted(names: readonly string[], path: string): Promise<void> {
    await this.ready();
    refuseUntrusted(names, path, this.trust.keys(), (key) => this.index.holders(key));
  }

  /**
   * Once loaded: the counts and id sets kept beside the view (fleet-counts.ts)
   * and a collector by id without a wait, for a summary that reads a few
   * figures and the first few records, not the fleet (the dashboard).
   */
  async counters(): Promise<{ counts: FleetCounts; lookup: (id: string) => Collector | undefined }> {
    await this.ready();
    return { counts: this.counts, lookup: (id) => this.view.get(id) };
  }

  /** Tells `listener` of every record the view takes or drops from now on (store/view.ts ViewListener). Returns the unsubscribe. */
  listen(listener: ViewListener<Collector>): () => void {
    return this.view.listen(listener);
  }

  /** The records and the trusted keys, read once: matchers read both. */
  private ready(): Promise<unknown> {
    return Promise.all([this.view.ready(), this.trust.ready()]);
  }

  /** Counts by status, for health: kept beside the view (fleet-counts.ts). */
  async countByStatus(): Promise<Record<CollectorStatus, number>> {
    return (await this.counters()).counts.collectors().byStatus;
  }
}
