/**
 * The collector registry: records created by the API (or by an OpAMP
 * collector's first contact), their labels, and their status as reported by
 * the control channels. Every change is audited with the write itself.
 */
import { COLLECTOR_STATUSES, type CollectorStatus } from "../../shared/collector-status.ts";
import type { Collector } from "../../shared/collectors.ts";
import type { ManagementMode } from "../../shared/vocabulary.ts";
import { auditEntry, type Actor } from "../audit/audit.ts";
import { ConflictError, NotFoundError } from "../errors.ts";
import type { Doc, Store } from "../store/store.ts";
import { RecordView } from "../store/view.ts";
import { VERSION_TAG } from "./runtime.ts";

export interface NewCollector {
  name: string;
  environment?: string | null;
  managementMode?: ManagementMode;
  tags?: Record<string, string>;
}

export type CollectorPatch = Partial<Pick<Collector, "name" | "environment" | "managementMode" | "tags">>;

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export const COLLECTORS = "collectors";
const COLLECTION = COLLECTORS;

export class Collectors {
  private readonly view: RecordView<Collector>;

  constructor(private readonly store: Store) {
    this.view = new RecordView(store, COLLECTION);
  }

  close(): void {
    this.view.close();
  }

  async create(who: Actor, input: NewCollector): Promise<Collector> {
    const now = new Date().toISOString();
    const collector: Collector = {
      id: Bun.randomUUIDv7(),
      name: input.name.trim(),
      environment: input.environment ?? null,
      managementMode: input.managementMode ?? "opamp",
      tags: input.tags ?? {},
      status: "pending",
      lastSeen: null,
      health: null,
      createdAt: now,
      updatedAt: now,
    };
    const [doc] = await this.store.write(
      [{ op: "put", collection: COLLECTION, id: collector.id, data: collector, expect: "absent" }],
      [auditEntry(who, "collector.create", "collector", collector.id, { name: collector.name })],
    );
    this.view.apply(doc as Doc<Collector>);
    return collector;
  }

  async get(id: string): Promise<Collector> {
    await this.view.ready();
    const collector = this.view.get(id);
    if (!collector) throw new NotFoundError("Collector", id);
    return collector;
  }

  async update(who: Actor, id: string, patch: CollectorPatch): Promise<Collector> {
    const doc = await this.store.get<Collector>(COLLECTION, id);
    if (!doc) throw new NotFoundError("Collector", id);
    const changed = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as CollectorPatch;
    if (changed.name !== undefined) changed.name = changed.name.trim();
    const collector: Collector = { ...doc.data, ...changed, updatedAt: new Date().toISOString() };
    const [written] = await this.store.write(
      [{ op: "put", collection: COLLECTION, id, data: collector, expect: doc.version }],
      [auditEntry(who, "collector.update", "collector", id, { changed: Object.keys(changed) })],
    );
    this.view.apply(written as Doc<Collector>);
    return collector;
  }

  /**
   * Keeps the `service.version` tag equal to what the collector reports, so
   * renders pick upstream's names for the version it runs now (an upgraded
   * collector reports its new version on its next full description). Only
   * that tag changes; a concurrent edit of the record wins and is retried once.
   */
  async reportVersion(who: Actor, id: string, version: string): Promise<void> {
    for (let attempt = 0; attempt < 2; attempt++) {
      const doc = await this.store.get<Collector>(COLLECTION, id);
      if (!doc || doc.data.tags[VERSION_TAG] === version) return;
      const collector: Collector = { ...doc.data, tags: { ...doc.data.tags, [VERSION_TAG]: version }, updatedAt: new Date().toISOString() };
      try {
        const [written] = await this.store.write(
          [{ op: "put", collection: COLLECTION, id, data: collector, expect: doc.version }],
          [auditEntry(who, "collector.update", "collector", id, { changed: ["tags"], reported: { [VERSION_TAG]: version } })],
        );
        this.view.apply(written as Doc<Collector>);
        return;
      } catch (error) {
        if (!(error instanceof ConflictError) || attempt === 1) throw error;
      }
    }
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

  /** Counts by status, for health. */
  async countByStatus(): Promise<Record<CollectorStatus, number>> {
    const counts = Object.fromEntries(COLLECTOR_STATUSES.map((s) => [s, 0])) as Record<CollectorStatus, number>;
    await this.view.ready();
    for (const collector of this.view.all()) counts[collector.status]++;
    return counts;
  }
}
