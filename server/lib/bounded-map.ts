/**
 * A cache that keeps at most `limit` entries and drops the oldest inserted when a new key comes
 * (setting a key it holds keeps its place, as a Map does; one deleted and set again counts as new,
 * which is how a least-recently-used cache marks a use).
 *
 * Finding the oldest with `map.keys().next()` is what a Map alone offers, but Bun's Map
 * (JavaScriptCore) keeps a deleted entry's slot until it rehashes, and a fresh iterator walks every
 * such slot from the start: at 20,000 entries, evicting that way cost ~19 µs an insert, and with
 * every collector's config its own it was half of a fleet render (BENCHMARKS.md, issue 36 third
 * pass). One iterator kept from eviction to eviction walks each slot once.
 */
export class BoundedMap<K, V> {
  private readonly map = new Map<K, V>();
  /** Where the next eviction resumes: a Map iterator goes on over entries set after it was made and skips deleted ones. */
  private oldest: MapIterator<K> = this.map.keys();

  constructor(private readonly limit: number) {}

  get size(): number {
    return this.map.size;
  }

  get(key: K): V | undefined {
    return this.map.get(key);
  }

  has(key: K): boolean {
    return this.map.has(key);
  }

  set(key: K, value: V): this {
    if (this.map.size >= this.limit && !this.map.has(key)) this.evict();
    this.map.set(key, value);
    return this;
  }

  delete(key: K): boolean {
    return this.map.delete(key);
  }

  /** The entries, oldest inserted first. */
  entries(): MapIterator<[K, V]> {
    return this.map.entries();
  }

  values(): MapIterator<V> {
    return this.map.values();
  }

  clear(): void {
    this.map.clear();
    this.oldest = this.map.keys();
  }

  private evict(): void {
    let next = this.oldest.next();
    // An iterator that once reached the end stays there: a new one starts from the oldest left.
    if (next.done) {
      this.oldest = this.map.keys();
      next = this.oldest.next();
    }
    if (!next.done) this.map.delete(next.value);
  }
}
