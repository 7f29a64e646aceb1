import { expect, test } from "bun:test";
import type { Meaning } from "./names.ts";
import { collectorTotals, FleetThroughput } from "./top.ts";
import { ThroughputWindow } from "./window.ts";

const ACCEPTED: Meaning = { kind: "receiver", field: "inout", signal: "logs" };
const REFUSED: Meaning = { kind: "receiver", field: "errors", signal: "logs" };
const SENT: Meaning = { kind: "exporter", field: "inout", signal: "logs" };
const FAILED: Meaning = { kind: "exporter", field: "errors", signal: "logs" };

/** Two cumulative points 10 s apart: `perSecond` of each meaning (`seconds` apart, arriving at the window's now). */
function feed(window: ThroughputWindow, id: string, rates: [Meaning, string, number][], seconds = 10) {
  const w = window.touch(id);
  for (const [meaning, component, perSecond] of rates) {
    const key = `${meaning.kind}.${meaning.field} ${component}`;
    window.add(w, key, meaning, component, "logs", 0, 1_000_000, 1, "cumulative");
    window.add(w, key, meaning, component, "logs", perSecond * seconds, 1_000_000 + seconds * 1000, 1, "cumulative");
  }
}

const NOON = Date.UTC(2026, 0, 1, 12);

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
  // Ten minutes at these rates, arriving 5 s into a bucket: the hour's series covers the bucket before.
  const window = new ThroughputWindow({ now: () => NOON + 5000 });
  for (let i = 1; i <= 7; i++)
    feed(window, `c${i}`, [[ACCEPTED, "otlp", i * 10], ...(i % 3 === 0 ? [[FAILED, "out", i] as [Meaning, string, number]] : [])], 600);
  const top = new FleetThroughput(window, 3);
  for (let i = 0; i <= 8; i++) top.offer(`c${i}`, `name ${i}`); // c0 and c8 never reported
  const result = top.result();
  expect(result.reporting).toBe(7);
  expect(result.current).toBeCloseTo(280, 3);
  // The number is the chart's newest point: the bucket ending at the last reports' bucket boundary.
  expect(result.history.at(-1)).toEqual({ time: NOON, value: result.current!, collectors: 7 });
  expect(result.currentCollectors).toBe(7);
  expect(result.byRecords.map((r) => [r.name, r.rate])).toEqual([
    ["name 7", 70],
    ["name 6", 60],
    ["name 5", 50],
  ]);
  expect(result.byErrors.map((r) => [r.name, r.rate])).toEqual([
    ["name 6", 6],
    ["name 3", 3],
  ]);
  expect(new FleetThroughput(window, 3).result()).toMatchObject({ reporting: 0, byRecords: [], byErrors: [], current: null });
});

test("a collector svc sees offline, or silent for longer than the window, is not counted now; its past stays in the series", () => {
  const clock = { now: NOON + 5000 };
  const window = new ThroughputWindow({ now: () => clock.now });
  for (const [id, rate] of [
    ["a", 10],
    ["b", 20],
    ["c", 50],
  ] as const)
    feed(window, id, [[ACCEPTED, "otlp", rate]], 600);
  const all = new FleetThroughput(window, 5);
  for (const id of ["a", "b", "c"]) all.offer(id, id);
  expect(all.result()).toMatchObject({ reporting: 3, current: expect.closeTo(80, 3), currentCollectors: 3 });

  // c goes offline; a and b report on for a minute, arriving every 15 s.
  for (let step = 1; step <= 4; step++) {
    clock.now = NOON + 5000 + step * 15_000;
    for (const [id, rate] of [
      ["a", 10],
      ["b", 20],
    ] as const) {
      const w = window.touch(id);
      window.add(w, `receiver.inout otlp`, ACCEPTED, "otlp", "logs", rate * (600 + step * 15), 1_600_000 + step * 15_000, 1, "cumulative");
    }
  }
  const now = new FleetThroughput(window, 5);
  for (const id of ["a", "b"]) now.offer(id, id);
  now.offer("c", "c", true);
  const result = now.result();
  expect(result.reporting).toBe(2);
  expect(result.byRecords.map((r) => r.id)).toEqual(["b", "a"]);
  expect(result.current).toBeCloseTo(30, 3);
  expect(result.currentCollectors).toBe(2);
  expect(result.history.at(-1)!.value).toBe(result.current!);
  // Before c went offline the series still holds it.
  expect(result.history.find((p) => p.time === NOON)!.value).toBeCloseTo(80, 3);

  // Silent for longer than the window: not counted, even when not marked offline.
  clock.now += window.windowMs + 1;
  const silent = new FleetThroughput(window, 5);
  for (const id of ["a", "b", "c"]) silent.offer(id, id);
  expect(silent.result()).toMatchObject({ reporting: 0, current: null });
});

// How long this pass takes is bench/fleet-top.ts's to measure (BENCHMARKS.md), not a test's.
test("one pass over 100,000 collectors, 10,000 of them reporting, counts the reporting ones and keeps only the top n", () => {
  const window = new ThroughputWindow();
  for (let i = 0; i < 10_000; i++)
    feed(window, `c${i}`, [
      [ACCEPTED, "otlp", i % 977],
      [SENT, "out", i % 977],
      [FAILED, "out", i % 13],
    ]);
  const top = new FleetThroughput(window, 5);
  for (let i = 0; i < 100_000; i++) top.offer(`c${i}`, `c${i}`);
  const result = top.result();
  expect(result.reporting).toBe(10_000);
  expect(result.byRecords.map((r) => r.rate)).toEqual([976, 976, 976, 976, 976]);
  expect(result.byErrors.map((r) => r.rate)).toEqual([12, 12, 12, 12, 12]);
});
