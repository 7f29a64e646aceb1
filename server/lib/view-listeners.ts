/**
 * One ViewListener that tells several: a RecordView takes one listener
 * (store/view.ts), and more than one index or set of counters is kept
 * beside some views (the collectors' attribute index and dashboard counts).
 */
import type { ViewListener } from "../store/view.ts";

export function listeners<T>(...all: ViewListener<T>[]): ViewListener<T> {
  return {
    put: (record) => {
      for (const listener of all) listener.put(record);
    },
    remove: (id) => {
      for (const listener of all) listener.remove(id);
    },
  };
}
