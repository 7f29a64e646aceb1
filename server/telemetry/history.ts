/**
 * One collector's throughput over the last hour in 15 s buckets: records/s in
 * and out and errors/s per signal, and process CPU and memory. Fixed size per
 * collector; a signal's buckets are allocated when the collector first
 * reports it, so a collector with one signal pays for one.
 *
 * Buckets are on the server's clock, so a chart's axis is right even when a
 * collector's clock is not: a point's interval (from its previous point, or its
 * start time) keeps its length but is moved to end at the point's arrival.
 * A counter's increment is spread over the buckets that interval overlaps, in
 * proportion, so a collector pushing every 60 s still fills every 15 s bucket;
 * a level (memory) is set on each bucket it overlaps. Recording allocates
 * nothing: it adds into preallocated Float32Arrays (rates need no more
 * precision), where NaN means nothing measured that bucket.
 */
import type { Signal } from "../../shared/config-records.ts";
import type { Meaning } from "./names.ts";

export const STEP_MS = 15_000;
/** Complete buckets answered: one hour. */
export const BUCKETS = 240;
/** Slots kept: the hour and the bucket still filling. */
const SLOTS = BUCKETS + 1;

const SIGNALS: readonly Signal[] = ["logs", "metrics", "traces"];
/** Groups: one per signal (in, out, errors), then process (cpu, memoryRss). */
const PROCESS = 3;
const WIDTH = [3, 3, 3, 2] as const;
const IN = 0;
const OUT = 1;
const ERRORS = 2;
const CPU = 0;
const MEMORY = 1;

/** A field as group * 4 + column; a series' fields as a bitmask of those. */
const bit = (group: number, column: number) => 1 << (group * 4 + column);

/**
 * The history fields a series adds to, summed as the collector-wide figures of
 * window.ts's component rates: in is what receivers took in (refused items
 * too), out what exporters sent, errors every component's errors.
 */
export function historyFields(meaning: Meaning, signal: Signal | null): number {
  if (meaning.kind === "process") return meaning.field === "cpu" ? bit(PROCESS, CPU) : meaning.field === "memoryRss" ? bit(PROCESS, MEMORY) : 0;
  if (signal === null) return 0;
  const g = SIGNALS.indexOf(signal);
  const f = meaning.field;
  if (f === "errors") return bit(g, ERRORS) | (meaning.kind === "receiver" ? bit(g, IN) : 0);
  if (meaning.kind === "receiver") return bit(g, IN);
  if (meaning.kind === "exporter") return f === "in" ? 0 : bit(g, OUT);
  return 0;
}

export interface SignalHistory {
  signal: Signal;
  in: (number | null)[];
  out: (number | null)[];
  errors: (number | null)[];
}

export interface HistoryAnswer {
  /** Seconds per bucket. */
  step: number;
  /** Each bucket's end, in seconds since the Unix epoch; `BUCKETS` of them, oldest first. */
  times: number[];
  signals: SignalHistory[];
  process: { cpu: (number | null)[]; memoryRss: (number | null)[] };
}

export class History {
  /** Per group, SLOTS × width values, the slot of bucket b at (b % SLOTS) * width. */
  private readonly groups: (Float32Array | undefined)[] = [undefined, undefined, undefined, undefined];
  /** Number (ms / STEP_MS) of the newest bucket; -1 before the first record. */
  private newest = -1;

  /**
   * Adds a counter's `amount` spread over [from, to], or sets a level on the
   * buckets of [from, to] (server-clock ms), to every field in `fields`.
   */
  record(fields: number, from: number, to: number, amount: number, level: boolean): void {
    const span = to - from;
    const newest = Math.floor(to / STEP_MS);
    if (newest > this.newest) this.advance(newest);
    // An interval ending on a boundary has nothing in the bucket that starts there: that one stays unmeasured.
    const last = span > 0 ? Math.ceil(to / STEP_MS) - 1 : newest;
    const first = Math.max(Math.floor(from / STEP_MS), this.newest - SLOTS + 1);
    for (let b = first; b <= last; b++) {
      const share = level || span <= 0 ? amount : (amount * (Math.min(to, (b + 1) * STEP_MS) - Math.max(from, b * STEP_MS))) / span;
      for (let g = 0; g < 4; g++) {
        for (let c = 0; c < WIDTH[g]!; c++) {
          if ((fields & bit(g, c)) === 0) continue;
          const values = this.groups[g] ?? this.allocate(g);
          const at = (b % SLOTS) * WIDTH[g]! + c;
          const before = values[at]!;
          values[at] = level ? share : Number.isNaN(before) ? share : before + share;
        }
      }
    }
  }

  /** Moves the newest bucket to `bucket`, emptying the slots it reuses. */
  private advance(bucket: number): void {
    const from = Math.max(this.newest + 1, bucket - SLOTS + 1);
    for (const [g, values] of this.groups.entries()) {
      if (values === undefined) continue;
      for (let b = from; b <= bucket; b++) values.fill(NaN, (b % SLOTS) * WIDTH[g]!, ((b % SLOTS) + 1) * WIDTH[g]!);
    }
    this.newest = bucket;
  }

  private allocate(g: number): Float32Array {
    const values = new Float32Array(SLOTS * WIDTH[g]!).fill(NaN);
    this.groups[g] = values;
    return values;
  }

  /**
   * Adds the records/s its receivers took in (every signal) in each of the
   * `BUCKETS` buckets ending at `endMs` into `into`, marking the buckets that
   * had anything measured in `measured`: the fleet's chart sums collectors.
   */
  addRecordsIn(endMs: number, into: Float64Array, measured: Uint8Array): void {
    const first = Math.floor(endMs / STEP_MS) - BUCKETS;
    for (let g = 0; g < PROCESS; g++) {
      const values = this.groups[g];
      if (values === undefined) continue;
      for (let i = 0; i < BUCKETS; i++) {
        const b = first + i;
        if (b > this.newest || b <= this.newest - SLOTS) continue;
        const v = values[(b % SLOTS) * WIDTH[g]! + IN]!;
        if (Number.isNaN(v)) continue;
        into[i]! += v / (STEP_MS / 1000);
        measured[i] = 1;
      }
    }
  }

  /** The `BUCKETS` complete buckets ending at `endMs` (rounded down to a bucket boundary), as rates. */
  read(endMs: number): HistoryAnswer {
    const end = Math.floor(endMs / STEP_MS);
    const first = end - BUCKETS;
    const times = Array.from({ length: BUCKETS }, (_, i) => ((first + i + 1) * STEP_MS) / 1000);
    const column = (g: number, c: number, perSecond: boolean): (number | null)[] => {
      const values = this.groups[g];
      return times.map((_, i) => {
        const b = first + i;
        // A slot holds bucket b only while b is within SLOTS of the newest one.
        if (values === undefined || b > this.newest || b <= this.newest - SLOTS) return null;
        const v = values[(b % SLOTS) * WIDTH[g]! + c]!;
        return Number.isNaN(v) ? null : perSecond ? v / (STEP_MS / 1000) : v;
      });
    };
    return {
      step: STEP_MS / 1000,
      times,
      signals: SIGNALS.flatMap((signal, g) =>
        this.groups[g] === undefined ? [] : [{ signal, in: column(g, IN, true), out: column(g, OUT, true), errors: column(g, ERRORS, true) }],
      ),
      process: { cpu: column(PROCESS, CPU, true), memoryRss: column(PROCESS, MEMORY, false) },
    };
  }
}
