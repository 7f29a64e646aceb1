import { expect, test } from "bun:test";
import { meaningOf } from "./names.ts";
import { StallDetector } from "./stall.ts";
import { ThroughputWindow } from "./window.ts";

const accepted = meaningOf("otelcol_receiver_accepted_spans")!;
const refused = meaningOf("otelcol_receiver_refused_spans")!;
const sent = meaningOf("otelcol_exporter_sent_spans")!;
const MINUTE = 60_000;

test("only a receiver's accepted records count as traffic; delta points too; refusals and exports do not", () => {
  let now = 1_000_000;
  const window = new ThroughputWindow({ now: () => now, maxCollectors: 2 });
  const detector = new StallDetector(window, 3 * MINUTE);
  const push = (id: string, value: number, meaning = accepted) => {
    now += MINUTE;
    const w = window.touch(id, now);
    window.add(w, `${meaning.kind} ${meaning.field}`, meaning, "otlp", "traces", value, now, now - MINUTE, "delta");
  };
  push("c1", 5);
  // Refusals and exporter sends keep arriving; accepted stays at 0 for three minutes.
  for (let i = 0; i < 3; i++) {
    push("c1", 0);
    push("c1", 9, refused);
    push("c1", 9, sent);
  }
  expect(detector.sweep(() => true).map((s) => s.collectorId)).toEqual(["c1"]);
  expect(detector.sweep(() => true)).toEqual([]);

  // Evicted from the window (a bound of two collectors): forgotten, so traffic then quiet there again is a new stall.
  push("c2", 1);
  push("c3", 1);
  expect(detector.sweep(() => true)).toEqual([]);
  push("c1", 5);
  for (let i = 0; i < 3; i++) push("c1", 0);
  expect(detector.sweep(() => true).map((s) => s.collectorId)).toEqual(["c1"]);
});
