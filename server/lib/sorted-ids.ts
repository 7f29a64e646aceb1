/**
 * A set of ids kept in ascending order, for the dashboard's "count and the
 * first few by id" lists kept beside a view (collectors/fleet-counts.ts,
 * rollout/attention-sets.ts): adding or removing one is a binary search and
 * one array splice (a memmove, microseconds at 100,000), so reading the
 * first few never sorts the set.
 */
export class SortedIds {
  private readonly ids: string[] = [];

  get size(): number {
    return this.ids.length;
  }

  has(id: string): boolean {
    return this.ids[this.indexOf(id)] === id;
  }

  add(id: string): void {
    const last = this.ids[this.ids.length - 1];
    if (last === undefined || last < id) {
      this.ids.push(id);
      return;
    }
    const at = this.indexOf(id);
    if (this.ids[at] !== id) this.ids.splice(at, 0, id);
  }

  delete(id: string): void {
    const at = this.indexOf(id);
    if (this.ids[at] === id) this.ids.splice(at, 1);
  }

  /** Adds or removes `id` as `member` says. */
  set(id: string, member: boolean): void {
    if (member) this.add(id);
    else this.delete(id);
  }

  /** The ids in ascending order (do not change the array). */
  values(): readonly string[] {
    return this.ids;
  }

  /** First index whose id is >= `id`. */
  private indexOf(id: string): number {
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
