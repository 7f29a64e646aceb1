/**
 * For tests of what is kept beside a RecordView (fleet-counts.test.ts,
 * attention-sets.test.ts): a store whose change feed a test steers, to play
 * this replica's writes, another replica's, and a stretch the feed missed
 * followed by a resync, over one real SqliteStore.
 */
import type { SqliteStore } from "./sqlite.ts";
import type { Change, Store } from "./store.ts";

/**
 * The store as watchers see it: `mode` "own" passes this replica's writes
 * with their records, "other" strips them (as another replica's arrive),
 * "cut" drops them (missed: only a resync, which `resync` plays, brings them).
 */
export function gated(store: SqliteStore) {
  const gate = { mode: "own" as "own" | "other" | "cut", resyncs: [] as (() => void)[] };
  const watch: Store["watch"] = (listener, onResync) => {
    if (onResync) gate.resyncs.push(onResync);
    return store.watch((changes, at) => {
      if (gate.mode === "cut") return;
      listener(gate.mode === "other" ? changes.map(({ data: _, ...change }): Change => change) : changes, at);
    });
  };
  const wrapped = new Proxy(store, {
    get(target, key) {
      if (key === "watch") return watch;
      const value = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as Store;
  return { gate, wrapped, resync: () => gate.resyncs.forEach((r) => r()) };
}
