/**
 * The collector registry: records created by the API (or by an OpAMP
 * collector's first contact), their labels, and their status as reported by
 * the control channels. Every change is audited with the write itself.
 */
import { COLLECTOR_STATUSES, type CollectorStatus } from "../../shared/collector-status.ts";
import type { Collector } from "../../shared/collectors.ts";
import type { ManagementMode } from "../../shared/vocabulary.ts";
import { auditEntry, type Actor } from "../audit/audit.ts";
import { ConflictError, NotFoundError, ValidationError } from "../errors.ts";
import type { Doc, Store } from "../store/store.ts";
import { RecordView } from "../store/view.ts";
import { sameReported, VIRTUAL_KEYS } from "./attributes.ts";
import { VERSION_TAG } from "./runtime.ts";

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

export const COLLECTORS = "collectors";
const COLLECTION = COLLECTORS;

/** A collector as it is and as a write would leave it (`before` null: the write creates it). */
export interface CollectorEdit {
  before: Collector | null;
  after: Collector;
}

/** Checks edits before they are written; throws (an AppError) to refuse them all. */
export type VetEdits = (edits: CollectorEdit[]) => Promise<void>;

/** Hears the ids of collectors whose attributes (or what else a render reads of the record) were just written here. */
export type AttributesListener = (ids: string[]) => void;

export class Collectors {
  private readonly view: RecordView<Collector>;
  private readonly attributeListeners = new Set<AttributesListener>();

  constructor(private readonly store: Store) {
    this.view = new RecordView(store, COLLECTION);
  }

  close(): void {
    this.view.close();
    this.attributeListeners.clear();
  }

  /**
   * Calls `listener` after a write on this replica that may change what a
   * render reads of a collector (attributeValues, name, mode, reported
   * version): create, update, report, reportVersion, and each chunk of a bulk
   * tag edit; not delete. Only the writing replica hears it, so one replica
   * acts on each change. Returns the unsubscribe.
   */
  onAttributesChanged(listener: AttributesListener): () => void {
    this.attributeListeners.add(listener);
    return () => this.attributeListeners.delete(listener);
  }

  private attributesChanged(ids: string[]): void {
    for (const listener of this.attributeListeners) listener(ids);
  }

  /** `vet` may refuse the record before it is written. */
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
    await vet?.([{ before: null, after: collector }]);
    const [doc] = await this.store.write(
      [{ op: "put", collection: COLLECTION, id: collector.id, data: collector, expect: "absent" }],
      [auditEntry(who, "collector.create", "collector", collector.id, { name: collector.name, ...(input.cloneOf ? { cloneOf: input.cloneOf.collectorId } : {}) })],
    );
    this.view.apply(doc as Doc<Collector>);
    this.attributesChanged([collector.id]);
    return collector;
  }

  async get(id: string): Promise<Collector> {
    await this.view.ready();
    const collector = this.view.get(id);
    if (!collector) throw new NotFoundError("Collector", id);
    return collector;
  }

  /** `vet` may refuse the change before it is written. */
  async update(who: Actor, id: string, patch: CollectorPatch, vet?: VetEdits): Promise<Collector> {
    const doc = await this.store.get<Collector>(COLLECTION, id);
    if (!doc) throw new NotFoundError("Collector", id);
    const changed = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as CollectorPatch;
    if (changed.name !== undefined) changed.name = changed.name.trim();
    const collector: Collector = { ...doc.data, ...changed, updatedAt: new Date().toISOString() };
    await vet?.([{ before: doc.data, after: collector }]);
    const [written] = await this.store.write(
      [{ op: "put", collection: COLLECTION, id, data: collector, expect: doc.version }],
      [auditEntry(who, "collector.update", "collector", id, { changed: Object.keys(changed) })],
    );
    this.view.apply(written as Doc<Collector>);
    this.attributesChanged([id]);
    return collector;
  }

  /**
   * Keeps the `service.version` tag equal to what the collector reports, so
   * renders pick upstream's names for the version it runs now (an upgraded
   * collector reports its new version on its next full description). Only
   * that tag changes; a concurrent edit of the record wins and is retried once.
   * Answers whether it wrote.
   */
  async reportVersion(who: Actor, id: string, version: string): Promise<boolean> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const doc = await this.store.get<Collector>(COLLECTION, id);
      if (!doc || doc.data.tags[VERSION_TAG] === version) return false;
      const collector: Collector = { ...doc.data, tags: { ...doc.data.tags, [VERSION_TAG]: version }, updatedAt: new Date().toISOString() };
      try {
        const [written] = await this.store.write(
          [{ op: "put", collection: COLLECTION, id, data: collector, expect: doc.version }],
          [auditEntry(who, "collector.update", "collector", id, { changed: ["tags"], reported: { [VERSION_TAG]: version } })],
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
   * Keeps what the collector reports about itself (already bounded by
   * attributes.ts `boundReported`). Compared against the in-memory record
   * first, so a report that changes nothing costs no store access: channels
   * may call this on every full description or poll. A concurrent edit of
   * the record is retried once. Answers whether it wrote.
   */
  async report(who: Actor, id: string, reported: Record<string, string>): Promise<boolean> {
    await this.view.ready();
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
   * Sets and removes tags on every collector `matches` selects, in writes of
   * BULK_CHUNK collectors, each with one audit entry (`collector.tags`) naming
   * the matchers, the edit and the collectors it changed. Collectors whose tags
   * would not change are not written. Refused whole (nothing written) when a
   * key is virtual, both set and removed, or a collector would hold more than
   * MAX_TAGS tags, or when `vet` throws on the collectors as they would be.
   * A chunk that meets a concurrent write is read again and retried once.
   */
  async editTags(
    who: Actor,
    matches: (collector: Collector) => boolean,
    edit: TagEdit,
    describe: Record<string, unknown>,
    vet?: VetEdits,
  ): Promise<TagEditResult> {
    const virtual = [...Object.keys(edit.set), ...edit.remove].filter((key) => (VIRTUAL_KEYS as readonly string[]).includes(key));
    if (virtual.length > 0) {
      throw new ValidationError(`${virtual[0]} is a virtual attribute, computed from the record; it cannot be a tag.`, [
        { path: Object.keys(edit.set).includes(virtual[0]!) ? `set.${virtual[0]}` : "remove", message: "is a virtual attribute" },
      ]);
    }
    const both = edit.remove.filter((key) => key in edit.set);
    if (both.length > 0) throw new ValidationError(`The tag ${both[0]} is both set and removed.`, [{ path: "remove", message: `${both[0]} is also in set` }]);
    await this.view.ready();
    const selected = this.view.page(matches, Number.POSITIVE_INFINITY).items;
    const apply = (tags: Record<string, string>): Record<string, string> | null => {
      const next: Record<string, string> = { ...tags, ...edit.set };
      for (const key of edit.remove) delete next[key];
      const keys = Object.keys(next);
      if (keys.length === Object.keys(tags).length && keys.every((key) => tags[key] === next[key])) return null;
      return next;
    };
    const changing = selected.filter((collector) => apply(collector.tags) !== null);
    const over = changing.find((collector) => Object.keys(apply(collector.tags)!).length > MAX_TAGS);
    if (over) throw new ValidationError(`Collector ${over.id} would hold more than ${MAX_TAGS} tags.`, [{ path: "set", message: `collector ${over.id} would hold more than ${MAX_TAGS} tags` }]);
    await vet?.(changing.map((collector) => ({ before: collector, after: { ...collector, tags: apply(collector.tags)! } })));
    let changed = 0;
    for (let at = 0; at < changing.length; at += BULK_CHUNK) {
      const ids = changing.slice(at, at + BULK_CHUNK).map((collector) => collector.id);
      for (let attempt = 0; ; attempt++) {
        const docs = await this.store.getMany<Collector>(COLLECTION, ids);
        const now = new Date().toISOString();
        const ops = [];
        for (const doc of docs.values()) {
          const tags = apply(doc.data.tags);
          if (tags === null) continue;
          ops.push({ op: "put" as const, collection: COLLECTION, id: doc.id, data: { ...doc.data, tags, updatedAt: now }, expect: doc.version });
        }
        if (ops.length === 0) break;
        try {
          const written = await this.store.write(ops, [
            auditEntry(who, "collector.tags", "collector", null, { ...describe, set: edit.set, remove: edit.remove, collectorIds: ops.map((op) => op.id) }),
          ]);
          for (const doc of written) this.view.apply(doc as Doc<Collector>);
          this.attributesChanged(ops.map((op) => op.id));
          changed += ops.length;
          break;
        } catch (error) {
          if (!(error instanceof ConflictError) || attempt === 1) throw error;
        }
      }
    }
    return { matched: selected.length, changed };
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
   * compileFilter); `after` is the last id of the previous page.
   */
  async list(matches: (collector: Collector) => boolean, limit: number, after?: string): Promise<Page<Collector>> {
    await this.view.ready();
    return this.view.page(matches, limit, after);
  }

  /** Every collector, in id order. */
  async all(): Promise<Collector[]> {
    await this.view.ready();
    return this.view.page(() => true, Number.POSITIVE_INFINITY).items;
  }

  /**
   * Calls `visit` with every collector in the in-memory view, unordered and
   * uncopied (do not keep or change them): one pass for fleet summaries such
   * as the dashboard, with no store reads.
   */
  async each(visit: (collector: Collector) => void): Promise<void> {
    await this.view.ready();
    for (const collector of this.view.all()) visit(collector);
  }

  /** Counts by status, for health. */
  async countByStatus(): Promise<Record<CollectorStatus, number>> {
    const counts = Object.fromEntries(COLLECTOR_STATUSES.map((s) => [s, 0])) as Record<CollectorStatus, number>;
    await this.view.ready();
    for (const collector of this.view.all()) counts[collector.status]++;
    return counts;
  }
}
