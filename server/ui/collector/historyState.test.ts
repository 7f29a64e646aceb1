import { expect, test } from "bun:test";
import { historyStateWords } from "./historyState.ts";
import type { HistoryEntry } from "./types.ts";

const entry = (fields: Partial<HistoryEntry>): HistoryEntry => ({
  seq: 1,
  commit: "c",
  hash: "h",
  time: "2026-01-01T00:00:00Z",
  state: "current",
  actor: "a",
  ...fields,
});

test("each history state reads in words", () => {
  expect(historyStateWords(entry({ state: "outdated" }), undefined)).toBe("not sent yet");
  expect(historyStateWords(entry({ state: "superseded" }), entry({ seq: 2 }))).toBe("superseded");
  expect(historyStateWords(entry({ state: "rolled_back" }), entry({ seq: 2, rollbackOf: 0 }))).toBe("rolled back");
  expect(historyStateWords(entry({ state: "rolled_back_by_collector", collectorRolledBackTo: 3 }), undefined)).toBe("rolled back by the collector to #3");
});

test("a failed config an operator rolled back from says both; one a publish replaced says failed", () => {
  expect(historyStateWords(entry({ state: "failed" }), entry({ seq: 2, rollbackOf: 0 }))).toBe("failed, then rolled back");
  expect(historyStateWords(entry({ state: "failed" }), entry({ seq: 2 }))).toBe("failed");
  expect(historyStateWords(entry({ state: "failed" }), undefined)).toBe("failed");
});
