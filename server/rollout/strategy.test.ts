import { expect, test } from "bun:test";
import { countBatch, cutBatches, nextStep, type Progress } from "./strategy.ts";

const ids = (n: number) => Array.from({ length: n }, (_, i) => `c${String(i).padStart(4, "0")}`);

test("batches: canary first, then fixed size or a percentage of all changed, in id order", () => {
  const changed = ids(10).reverse();
  expect(cutBatches(changed, { batchSize: 4, pauseSeconds: 0, failureThreshold: 0 })).toEqual([ids(4), ids(8).slice(4), ids(10).slice(8)]);
  expect(cutBatches(changed, { batchPercent: 25, pauseSeconds: 0, failureThreshold: 0 }).map((b) => b.length)).toEqual([3, 3, 3, 1]);
  const canary = new Set(["c0007", "c0002", "not-changed"]);
  const batches = cutBatches(changed, { batchSize: 5, pauseSeconds: 0, failureThreshold: 0 }, canary);
  expect(batches[0]).toEqual(["c0002", "c0007"]);
  expect(batches.slice(1).flat()).toEqual(ids(10).filter((id) => !canary.has(id)));
  // Neither size given: one batch; a tiny percentage still moves one collector at a time.
  expect(cutBatches(changed, { pauseSeconds: 0, failureThreshold: 0 })).toHaveLength(1);
  expect(cutBatches(changed, { batchPercent: 1, pauseSeconds: 0, failureThreshold: 0 })).toHaveLength(10);
  expect(cutBatches([], { batchSize: 3, pauseSeconds: 0, failureThreshold: 0 })).toEqual([]);
});

const progress = (over: Partial<Progress> = {}): Progress => ({
  strategy: { batchSize: 100, pauseSeconds: 30, failureThreshold: 2 },
  batches: 3,
  released: 0,
  settledAt: 1_000,
  acceptedThrough: -1,
  ...over,
});

test("a batch still applying holds the rollout; offline and reporting-only never do", () => {
  expect(nextStep(progress(), countBatch([...Array(99).fill("current"), "applying"]), 50_000)).toEqual({ kind: "wait" });
  expect(nextStep(progress(), countBatch([...Array(99).fill("current"), "outdated"]), 50_000)).toEqual({ kind: "wait" });
  expect(nextStep(progress(), countBatch([...Array(90).fill("current"), ...Array(10).fill("offline")]), 50_000)).toEqual({ kind: "release", batch: 1 });
});

test("the next batch waits pauseSeconds after the last one settled", () => {
  const counts = countBatch(Array(100).fill("current"));
  expect(nextStep(progress(), counts, 30_999)).toEqual({ kind: "wait", until: 31_000 });
  expect(nextStep(progress(), counts, 31_000)).toEqual({ kind: "release", batch: 1 });
  expect(nextStep(progress({ released: 2 }), counts, 31_000)).toEqual({ kind: "complete" });
});

test("failures above the threshold pause; at or below it the rollout goes on", () => {
  // 5 % of the batch failed against a 2 % threshold.
  const step = nextStep(progress(), countBatch([...Array(95).fill("current"), ...Array(5).fill("failed")]), 50_000);
  expect(step.kind).toBe("pause");
  expect(step.kind === "pause" && step.reason).toBe("5 of 100 collectors in batch 1 failed (5 %, threshold 2 %)");
  // 2 of 100 is the threshold itself; offline ones are not in the denominator (2 of 80 would be 2.5 %).
  expect(nextStep(progress(), countBatch([...Array(98).fill("current"), ...Array(2).fill("failed")]), 50_000).kind).toBe("release");
  expect(nextStep(progress(), countBatch([...Array(78).fill("current"), ...Array(2).fill("failed"), ...Array(20).fill("offline")]), 50_000).kind).toBe("pause");
  // The last batch failing pauses too, rather than completing quietly.
  expect(nextStep(progress({ released: 2 }), countBatch(Array(100).fill("failed")), 50_000).kind).toBe("pause");
  // Resumed by an operator: that batch's failures are accepted and the next one goes out.
  expect(nextStep(progress({ acceptedThrough: 0 }), countBatch([...Array(95).fill("current"), ...Array(5).fill("failed")]), 50_000)).toEqual({
    kind: "release",
    batch: 1,
  });
});
