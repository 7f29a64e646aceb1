/**
 * A history entry's state in words, as an operator asks "what became of
 * this config?": the API's state names are terse (rolled_back_by_collector),
 * and its "failed" wins over "rolled back", so a failed config an operator
 * then rolled back from says both (`next`: the entry after it).
 */
import type { HistoryEntry } from "./types.ts";

export function historyStateWords(entry: HistoryEntry, next: HistoryEntry | undefined): string {
  switch (entry.state) {
    case "failed":
      return next?.rollbackOf !== undefined ? "failed, then rolled back" : "failed";
    case "outdated":
      return "not sent yet";
    case "rolled_back":
      return "rolled back";
    case "rolled_back_by_collector":
      return entry.collectorRolledBackTo === undefined ? "rolled back by the collector" : `rolled back by the collector to #${entry.collectorRolledBackTo}`;
    default:
      // current, applying, failed, superseded read as they are.
      return entry.state;
  }
}
