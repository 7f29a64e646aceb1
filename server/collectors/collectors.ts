/**
 * The collector registry: records created by the API (or, later, by a
 * collector's first contact), their labels, and their status as reported by
 * the control channels. Every change is audited with the write itself.
 */
import { auditEntry, type Actor } from "../audit/audit.ts";
import { NotFoundError } from "../errors.ts";
import type { Store } from "../store/store.ts";

export const MANAGEMENT_MODES = ["opamp", "rcfg-remotecfg"] as const;
export type ManagementMode = (typeof MANAGEMENT_MODES)[number];

/** DESIGN.md §5: pending (never connected) → online ⇄ degraded → offline. */
export const COLLECTOR_STATUSES = ["pending", "online", "degraded", "offline"] as const;
export type CollectorStatus = (typeof COLLECTOR_STATUSES)[number];

export interface Collector {
  id: string;
  name: string;
  environment: string | null;
  managementMode: ManagementMode;
  tags: Record<string, string>;
  status: CollectorStatus;
  lastSeen: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface NewCollector {
  name: string;
  environment?: string | null;
  managementMode?: ManagementMode;
  tags?: Record<string, string>;
}

export type CollectorPatch = Partial<Pick<Collector, "name" | "environment" | "managementMode" | "tags">>;

export interface CollectorFilter {
  /** Each `key:value` must match a tag exactly; a bare `key` only needs the tag to exist. */
  tags?: string[];
  status?: CollectorStatus;
  environment?: string;
  managementMode?: ManagementMode;
  /** Case-insensitive substring of name, id or environment. */
  q?: string;
}

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

const COLLECTION = "collectors";
/** How many records one store read fetches while a filter scans. */
const SCAN_BATCH = 500;

export function matchesFilter(collector: Collector, filter: CollectorFilter): boolean {
  if (filter.status !== undefined && collector.status !== filter.status) return false;
  if (filter.environment !== undefined && collector.environment !== filter.environment) return false;
  if (filter.managementMode !== undefined && collector.managementMode !== filter.managementMode) return false;
  for (const tag of filter.tags ?? []) {
    const colon = tag.indexOf(":");
    const key = colon === -1 ? tag : tag.slice(0, colon);
    if (!(key in collector.tags)) return false;
    if (colon !== -1 && collector.tags[key] !== tag.slice(colon + 1)) return false;
  }
  if (filter.q !== undefined && filter.q !== "") {
    const needle = filter.q.toLowerCase();
    const haystack = [collector.name, collector.id, collector.environment ?? ""].join("\n").toLowerCase();
    if (!haystack.includes(needle)) return false;
  }
  return true;
}

export class Collectors {
  constructor(private readonly store: Store) {}

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
      createdAt: now,
      updatedAt: now,
    };
    await this.store.write(
      [{ op: "put", collection: COLLECTION, id: collector.id, data: collector, expect: "absent" }],
      [auditEntry(who, "collector.create", "collector", collector.id, { name: collector.name })],
    );
    return collector;
  }

  async get(id: string): Promise<Collector> {
    const doc = await this.store.get<Collector>(COLLECTION, id);
    if (!doc) throw new NotFoundError("Collector", id);
    return doc.data;
  }

  async update(who: Actor, id: string, patch: CollectorPatch): Promise<Collector> {
    const doc = await this.store.get<Collector>(COLLECTION, id);
    if (!doc) throw new NotFoundError("Collector", id);
    const changed = Object.fromEntries(Object.entries(patch).filter(([, v]) => v !== undefined)) as CollectorPatch;
    if (changed.name !== undefined) changed.name = changed.name.trim();
    const collector: Collector = { ...doc.data, ...changed, updatedAt: new Date().toISOString() };
    await this.store.write(
      [{ op: "put", collection: COLLECTION, id, data: collector, expect: doc.version }],
      [auditEntry(who, "collector.update", "collector", id, { changed: Object.keys(changed) })],
    );
    return collector;
  }

  async delete(who: Actor, id: string): Promise<void> {
    const doc = await this.store.get<Collector>(COLLECTION, id);
    if (!doc) throw new NotFoundError("Collector", id);
    await this.store.write(
      [{ op: "delete", collection: COLLECTION, id, expect: doc.version }],
      [auditEntry(who, "collector.delete", "collector", id, { name: doc.data.name })],
    );
  }

  /** One page in id (creation) order; `after` is the last id of the previous page. */
  async list(filter: CollectorFilter, limit: number, after?: string): Promise<Page<Collector>> {
    const items: Collector[] = [];
    let cursor = after;
    for (;;) {
      const batch = await this.store.list<Collector>(COLLECTION, { after: cursor, limit: SCAN_BATCH });
      for (const doc of batch) {
        if (!matchesFilter(doc.data, filter)) continue;
        if (items.length === limit) return { items, nextCursor: items[items.length - 1]!.id };
        items.push(doc.data);
      }
      if (batch.length < SCAN_BATCH) return { items, nextCursor: null };
      cursor = batch[batch.length - 1]!.id;
    }
  }

  /** Counts by status, for health. */
  async countByStatus(): Promise<Record<CollectorStatus, number>> {
    const counts = Object.fromEntries(COLLECTOR_STATUSES.map((s) => [s, 0])) as Record<CollectorStatus, number>;
    for (const doc of await this.store.list<Collector>(COLLECTION)) counts[doc.data.status]++;
    return counts;
  }
}
