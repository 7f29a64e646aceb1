import { expect, test } from "bun:test";
import type { PublishPlan } from "../../../shared/rollouts.ts";
import { batchCounts, DEFAULT_STRATEGY, mergePlans, planSummary, strategyFrom } from "./plan.ts";

const plan = (over: Partial<PublishPlan>): PublishPlan => ({
  commit: "c",
  changes: [],
  groups: [],
  unchanged: 0,
  pinned: [],
  errors: [],
  lacking: [],
  differences: [],
  ...over,
});
const change = (id: string) => ({ collectorId: id, name: id, from: null, to: { hash: "h" }, group: 0 });

test("the plan's summary counts changes, ways, unchanged, and pinned and errors only when there are any", () => {
  expect(planSummary(plan({ unchanged: 2 }))).toBe("No collector changes, 2 unchanged.");
  expect(planSummary(plan({ changes: [change("a")], groups: [{ diff: "", collectorIds: ["a"] }] }))).toBe("1 collector changes in 1 way, 0 unchanged.");
  const pinned = [{ collectorId: "p", name: "p", since: "t", by: "x" }];
  const errors = [{ collectorId: "e", name: "e", path: null, message: "m" }];
  const groups = [
    { diff: "1", collectorIds: ["a"] },
    { diff: "2", collectorIds: ["b", "c"] },
  ];
  expect(planSummary(plan({ changes: [change("a"), change("b"), change("c")], groups, unchanged: 1, pinned, errors }))).toBe(
    "3 collectors change in 2 ways, 1 unchanged, 1 pinned and skipped, 1 cannot be rendered.",
  );
});

test("the strategy form becomes the request's strategy", () => {
  expect(strategyFrom(DEFAULT_STRATEGY)).toBeUndefined();
  expect(strategyFrom({ ...DEFAULT_STRATEGY, mode: "staged", batch: "5", failureThreshold: "10" })).toEqual({
    batchSize: 5,
    pauseSeconds: 0,
    failureThreshold: 10,
  });
  expect(
    strategyFrom({ mode: "staged", batchBy: "percent", batch: "12.5", pauseSeconds: "", failureThreshold: "", canary: ' env=canary \n\n region=~"eu-.*"\n' }),
  ).toEqual({
    batchPercent: 12.5,
    pauseSeconds: 0,
    failureThreshold: 0,
    canary: { match: ["env=canary", 'region=~"eu-.*"'] },
  });
});

test("a batch reads as its non-zero counts", () => {
  expect(batchCounts({ size: 5, released: true, counts: { current: 4, failed: 1, queued: 0 } })).toBe("4 current, 1 failed");
  expect(batchCounts({ size: 5, released: false, counts: { queued: 5 } })).toBe("5 queued");
  expect(batchCounts({ size: 0, released: true, counts: {} })).toBe("no collectors");
});

test("plans of an edit made in parts read as one: equal diffs are one group, counts add up", () => {
  expect(mergePlans([])).toBeNull();
  const first = plan({
    changes: [change("a"), { ...change("b"), group: 1 }],
    groups: [
      { diff: "x", collectorIds: ["a"] },
      { diff: "y", collectorIds: ["b"] },
    ],
    unchanged: 1,
  });
  const second = plan({
    changes: [change("c")],
    groups: [{ diff: "y", collectorIds: ["c"] }],
    unchanged: 2,
    errors: [{ collectorId: "e", name: "e", path: null, message: "m" }],
  });
  const merged = mergePlans([first, second])!;
  expect(merged.groups).toEqual([
    { diff: "x", collectorIds: ["a"] },
    { diff: "y", collectorIds: ["b", "c"] },
  ]);
  expect(merged.changes.map((c) => [c.collectorId, c.group])).toEqual([
    ["a", 0],
    ["b", 1],
    ["c", 1],
  ]);
  expect({ unchanged: merged.unchanged, errors: merged.errors.length }).toEqual({ unchanged: 3, errors: 1 });
});

test("the Alloy collectors whose sources deliver other data are counted in the summary and merged per source type", () => {
  const host = (ids: string[]) => ({ sourceType: "hostmetrics", difference: "node_exporter names", collectorIds: ids });
  expect(planSummary(plan({ changes: [change("a")], groups: [{ diff: "", collectorIds: ["a"] }], differences: [host(["a"])] }))).toBe(
    "1 collector changes in 1 way, 0 unchanged, 1 source type delivers other data on Alloy.",
  );
  const merged = mergePlans([plan({ differences: [host(["a"])] }), plan({ differences: [host(["b"]), { ...host(["b"]), sourceType: "syslog" }] })])!;
  expect(merged.differences).toEqual([host(["a", "b"]), { ...host(["b"]), sourceType: "syslog" }]);
});
