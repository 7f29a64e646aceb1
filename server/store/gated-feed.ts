/**
 * For tests of what is kept beside a RecordView (fleet-counts.test.ts,
 * attention-sets.test.ts): a store whose change feed a test steers, to play
 * this replica's writes, another replica's, and a stretch the feed missed
 * followed by a resync, over one real SqliteStore.
 */
import type { SqliteStore } from "./sqlite.ts";
import type { Change, Store, WriteOp } from "./store.ts";

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
  const resync = () => gate.resyncs.forEach((r) => r());
  /**
   * Writes `ops` as the gate's mode says, lets the reads of another replica's records land (a few
   * turns of the event loop), and heals a stretch the feed missed with a resync.
   */
  const land = async (ops: WriteOp[]): Promise<void> => {
    await store.write(ops);
    for (let i = 0; i < 3; i++) await Bun.sleep(0);
    if (gate.mode === "cut") {
      gate.mode = "own";
      resync();
    }
  };
  return { gate, wrapped, resync, land };
}
