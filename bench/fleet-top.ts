/**
 * The dashboard's fleet throughput pass (server/telemetry/top.ts): one
 * FleetThroughput offered every collector of the fleet, `reporting` of them
 * with rates in the window (receiver accepted, exporter sent and failed), the
 * top 5 kept. Reports the median and worst pass over `rounds` passes after one
 * unmeasured pass. Target: ≤ 1 s per pass at 100,000 collectors, 10,000 reporting.
 * Usage: bun bench/fleet-top.ts [collectors=100000] [reporting=10000] [rounds=20]
 */
import type { Meaning } from "../server/telemetry/names.ts";
import { FleetThroughput } from "../server/telemetry/top.ts";
import { ThroughputWindow } from "../server/telemetry/window.ts";
import { percentile } from "./lib.ts";

const [collectors = 100_000, reporting = 10_000, rounds = 20] = process.argv.slice(2).map(Number);

const ACCEPTED: Meaning = { kind: "receiver", field: "inout", signal: "logs" };
const SENT: Meaning = { kind: "exporter", field: "inout", signal: "logs" };
const FAILED: Meaning = { kind: "exporter", field: "errors", signal: "logs" };

const window = new ThroughputWindow({ maxCollectors: reporting });
for (let i = 0; i < reporting; i++) {
  const w = window.touch(`c${i}`);
  for (const [meaning, component, perSecond] of [
    [ACCEPTED, "otlp", i % 977],
    [SENT, "out", i % 977],
    [FAILED, "out", i % 13],
  ] as const) {
    const key = `${meaning.kind}.${meaning.field} ${component}`;
    // Two cumulative points 10 s apart: `perSecond` over the interval.
    window.add(w, key, meaning, component, "logs", 0, 1_000_000, 1, "cumulative");
    window.add(w, key, meaning, component, "logs", perSecond * 10, 1_010_000, 1, "cumulative");
  }
}

function pass(): number {
  const started = performance.now();
  const top = new FleetThroughput(window, 5);
  for (let i = 0; i < collectors; i++) top.offer(`c${i}`, `c${i}`);
  const result = top.result();
  if (result.reporting !== reporting) throw new Error(`counted ${result.reporting} reporting collectors, not ${reporting}`);
  return performance.now() - started;
}

pass();
const samples = Array.from({ length: rounds }, pass).sort((a, b) => a - b);
console.log(
  `fleet throughput pass over ${collectors} collectors, ${reporting} reporting: ` +
    `median ${percentile(samples, 50).toFixed(1)} ms, max ${samples.at(-1)!.toFixed(1)} ms over ${rounds} passes`,
);
