/**
 * Every document of a collection in id order, read a page at a time, so a
 * sweep over a large collection never holds it whole, and many documents by
 * id the same way. Between pages the event loop gets a turn once a slice of
 * SCAN_SLICE_MS is used up: the embedded store reads synchronously, and 100,000
 * targets read in one call held every request for most of a second.
 */
import { SCAN_SLICE_MS, Slices } from "../lib/next-turn.ts";
import type { Doc, Store } from "./store.ts";

const PAGE = 500;

export async function* scan<T>(store: Store, collection: string, after?: string): AsyncGenerator<Doc<T>> {
  const slices = new Slices(SCAN_SLICE_MS);
  let cursor = after;
  for (;;) {
    const docs = await store.list<T>(collection, { limit: PAGE, ...(cursor !== undefined ? { after: cursor } : {}) });
    yield* docs;
    if (docs.length < PAGE) return;
    cursor = docs[docs.length - 1]!.id;
    if (slices.due) await slices.turn();
  }
}

/** `store.getMany` a page at a time, with turns between pages as `scan` gives them. */
export async function readMany<T>(store: Store, collection: string, ids: readonly string[]): Promise<Map<string, Doc<T>>> {
  const slices = new Slices(SCAN_SLICE_MS);
  const found = new Map<string, Doc<T>>();
  for (let i = 0; i < ids.length; i += PAGE) {
    for (const [id, doc] of await store.getMany<T>(collection, ids.slice(i, i + PAGE))) found.set(id, doc);
    if (slices.due) await slices.turn();
  }
  return found;
}
