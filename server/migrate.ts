/**
 * `svc-server migrate`: copies everything one deployment keeps (every
 * document with its version, the audit log, the config history) from one
 * store into another, then proves the copy by comparing per-collection
 * counts and SHA-256 digests and the history head. Versions are kept, so an
 * If-Match a client holds and every rollout's state mean the same after the
 * move. Each page is its own transaction: a copy cut short leaves a partial
 * target, which the next run refuses until --force clears it.
 */
import { createHash } from "node:crypto";
import { ConflictError } from "./errors.ts";
import { ConfigRepo } from "./configstore/repo.ts";
import type { AuditEntry, Store } from "./store/store.ts";

/** Documents or audit entries copied per transaction. */
const PAGE = 500;

export interface Digest {
  count: number;
  sha256: string;
}

/** What a store holds, in a form two stores can be compared by. */
export interface StoreSummary {
  collections: Record<string, Digest>;
  audit: Digest;
  /** The config history's head commit; null before the first commit. */
  head: string | null;
}

export interface Deployment {
  store: Store;
  repo: ConfigRepo;
}

async function* auditPages(store: Store): AsyncGenerator<AuditEntry[]> {
  let before: string | undefined;
  for (;;) {
    const page = await store.queryAudit({ limit: PAGE, before });
    if (page.length === 0) return;
    yield page;
    before = page[page.length - 1]!.id;
  }
}

async function* docPages(store: Store, collection: string) {
  let after: string | undefined;
  for (;;) {
    const page = await store.list(collection, { after, limit: PAGE });
    if (page.length === 0) return;
    yield page;
    after = page[page.length - 1]!.id;
  }
}

/** Counts and digests of every collection and of the audit log, in id order. */
export async function summarize({ store, repo }: Deployment): Promise<StoreSummary> {
  const collections: Record<string, Digest> = {};
  for (const name of await store.collections()) {
    const hash = createHash("sha256");
    let count = 0;
    for await (const page of docPages(store, name)) {
      for (const doc of page) hash.update(`${doc.id}\t${doc.version}\t${doc.updatedAt}\t${JSON.stringify(doc.data)}\n`);
      count += page.length;
    }
    collections[name] = { count, sha256: hash.digest("hex") };
  }
  const hash = createHash("sha256");
  let count = 0;
  for await (const page of auditPages(store)) {
    for (const entry of page) hash.update(JSON.stringify(entry) + "\n");
    count += page.length;
  }
  return { collections, audit: { count, sha256: hash.digest("hex") }, head: await repo.head() };
}

function isEmpty(summary: StoreSummary): boolean {
  return Object.keys(summary.collections).length === 0 && summary.audit.count === 0 && summary.head === null;
}

/** Deletes every document and audit entry of `store` (the history's objects and ref are documents too). */
async function clear(store: Store): Promise<void> {
  for (const name of await store.collections()) {
    for await (const page of docPages(store, name)) {
      await store.write(page.map((doc) => ({ op: "delete" as const, collection: name, id: doc.id })));
    }
  }
  await store.pruneAudit("9999-12-31T23:59:59.999Z");
}

/** Names the first difference between two summaries, or null when they agree. */
export function difference(a: StoreSummary, b: StoreSummary): string | null {
  const names = new Set([...Object.keys(a.collections), ...Object.keys(b.collections)]);
  for (const name of [...names].sort()) {
    const [x, y] = [a.collections[name], b.collections[name]];
    if (x?.count !== y?.count) return `collection ${name}: ${x?.count ?? 0} documents in the source, ${y?.count ?? 0} in the target`;
    if (x?.sha256 !== y?.sha256) return `collection ${name}: the documents differ (sha256 ${x?.sha256} vs ${y?.sha256})`;
  }
  if (a.audit.count !== b.audit.count) return `audit log: ${a.audit.count} entries in the source, ${b.audit.count} in the target`;
  if (a.audit.sha256 !== b.audit.sha256) return "audit log: the entries differ";
  if (a.head !== b.head) return `config history: head ${a.head} in the source, ${b.head} in the target`;
  return null;
}

export interface MigrateOptions {
  /** Clear a target that is not empty instead of refusing it. */
  force?: boolean;
  /** Told what is being copied, for the command's progress lines. */
  progress?: (line: string) => void;
}

/**
 * Copies `from` into `to` and verifies the copy; returns the verified summary.
 * A target holding anything is refused (409 target_not_empty) unless `force`.
 */
export async function migrate(from: Deployment, to: Deployment, options: MigrateOptions = {}): Promise<StoreSummary> {
  const say = options.progress ?? (() => {});
  const source = await summarize(from);
  if (!isEmpty(await summarize(to))) {
    if (!options.force) {
      throw new ConflictError("The target store is not empty; pass --force to replace what it holds.", "target_not_empty");
    }
    say("clearing the target (--force)");
    await clear(to.store);
  }
  for (const [name, digest] of Object.entries(source.collections)) {
    say(`copying ${digest.count} ${name} documents`);
    for await (const page of docPages(from.store, name)) await to.store.restore(page, []);
  }
  say(`copying ${source.audit.count} audit entries`);
  for await (const page of auditPages(from.store)) await to.store.restore([], page);
  say("copying the config history");
  await ConfigRepo.copyHistory(from.repo, to.repo);
  // The history's own documents are new in the target; compare everything else, and the head.
  const copied = await summarize(to);
  for (const name of Object.keys(copied.collections)) if (!(name in source.collections)) delete copied.collections[name];
  const problem = difference(source, copied);
  if (problem !== null) throw new Error(`the copy does not match the source: ${problem}`);
  return source;
}
