/**
 * A set of ids (or numbers) kept in ascending order: a view's ids for cursor
 * pages (store/view.ts), the dashboard's "count and the first few by id" lists
 * (collectors/fleet-counts.ts, rollout/attention-sets.ts), a tally's failed
 * positions (rollout/rollout-tally.ts). Adding or removing one is a binary
 * search and one array splice (a memmove, microseconds at 100,000), so
 * reading them in order never sorts.
 */
export class SortedIds<T extends string | number = string> {
  private readonly ids: T[] = [];

  get size(): number {
    return this.ids.length;
  }

  has(id: T): boolean {
    return this.ids[this.indexOf(id)] === id;
  }

  add(id: T): void {
    const last = this.ids[this.ids.length - 1];
    if (last === undefined || last < id) {
      this.ids.push(id);
      return;
    }
    const at = this.indexOf(id);
    if (this.ids[at] !== id) this.ids.splice(at, 0, id);
  }

  delete(id: T): void {
    const at = this.indexOf(id);
    if (this.ids[at] === id) this.ids.splice(at, 1);
  }

  /** Adds or removes `id` as `member` says. */
  set(id: T, member: boolean): void {
    if (member) this.add(id);
    else this.delete(id);
  }

  /** The ids in ascending order (do not change the array). */
  values(): readonly T[] {
    return this.ids;
  }

  /** First index whose id is >= `id` (the length when none is). */
  indexOf(id: T): number {
    let lo = 0;
    let hi = this.ids.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.ids[mid]! < id) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}
