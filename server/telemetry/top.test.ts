import { expect, test } from "bun:test";
import type { Meaning } from "./names.ts";
import { collectorTotals, FleetThroughput } from "./top.ts";
import { ThroughputWindow } from "./window.ts";

const ACCEPTED: Meaning = { kind: "receiver", field: "inout", signal: "logs" };
const REFUSED: Meaning = { kind: "receiver", field: "errors", signal: "logs" };
const SENT: Meaning = { kind: "exporter", field: "inout", signal: "logs" };
const FAILED: Meaning = { kind: "exporter", field: "errors", signal: "logs" };

/** Two cumulative points 10 s apart: `perSecond` of each meaning. */
function feed(window: ThroughputWindow, id: string, rates: [Meaning, string, number][]) {
  const w = window.touch(id);
  for (const [meaning, component, perSecond] of rates) {
    const key = `${meaning.kind}.${meaning.field} ${component}`;
    window.add(w, key, meaning, component, "logs", 0, 1_000_000, 1, "cumulative");
    window.add(w, key, meaning, component, "logs", perSecond * 10, 1_010_000, 1, "cumulative");
  }
}

test("a collector's records/s is what its receivers took in or refused; errors/s counts every component", () => {
  const window = new ThroughputWindow();
  feed(window, "a", [
    [ACCEPTED, "otlp", 100],
    [REFUSED, "otlp", 5],
    [ACCEPTED, "filelog/app", 20],
    [SENT, "otlphttp/out", 115],
    [FAILED, "otlphttp/out", 3],
  ]);
  expect(collectorTotals(window.rates("a")!)).toEqual({ records: 125, errors: 8 });
});

test("the top lists keep the n highest, highest first; collectors without errors or rates stay out", () => {
  const window = new ThroughputWindow();
  for (let i = 1; i <= 7; i++) feed(window, `c${i}`, [[ACCEPTED, "otlp", i * 10], ...(i % 3 === 0 ? [[FAILED, "out", i] as [Meaning, string, number]] : [])]);
  const top = new FleetThroughput(window, 3);
  for (let i = 0; i <= 8; i++) top.offer(`c${i}`, `name ${i}`); // c0 and c8 never reported
  const result = top.result();
  expect(result.reporting).toBe(7);
  expect(result.current).toBeCloseTo(280, 9);
  expect(result.byRecords.map((r) => [r.name, r.rate])).toEqual([
    ["name 7", 70],
    ["name 6", 60],
    ["name 5", 50],
  ]);
  expect(result.byErrors.map((r) => [r.name, r.rate])).toEqual([
    ["name 6", 6],
    ["name 3", 3],
  ]);
  expect(new FleetThroughput(window, 3).result()).toEqual({ reporting: 0, byRecords: [], byErrors: [], current: null });
});

// How long this pass takes is bench/fleet-top.ts's to measure (BENCHMARKS.md), not a test's.
test("one pass over 100,000 collectors, 10,000 of them reporting, counts the reporting ones and keeps only the top n", () => {
  const window = new ThroughputWindow();
  for (let i = 0; i < 10_000; i++) feed(window, `c${i}`, [[ACCEPTED, "otlp", i % 977], [SENT, "out", i % 977], [FAILED, "out", i % 13]]);
  const top = new FleetThroughput(window, 5);
  for (let i = 0; i < 100_000; i++) top.offer(`c${i}`, `c${i}`);
  const result = top.result();
  expect(result.reporting).toBe(10_000);
  expect(result.byRecords.map((r) => r.rate)).toEqual([976, 976, 976, 976, 976]);
  expect(result.byErrors.map((r) => r.rate)).toEqual([12, 12, 12, 12, 12]);
});
