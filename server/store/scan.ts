/**
 * Every document of a collection in id order, read a page at a time, so a
 * sweep over a large collection never holds it whole.
 */
import type { Doc, Store } from "./store.ts";

const PAGE = 500;

export async function* scan<T>(store: Store, collection: string, after?: string): AsyncGenerator<Doc<T>> {
  let cursor = after;
  for (;;) {
    const docs = await store.list<T>(collection, { limit: PAGE, ...(cursor !== undefined ? { after: cursor } : {}) });
    yield* docs;
    if (docs.length < PAGE) return;
    cursor = docs[docs.length - 1]!.id;
  }
}
