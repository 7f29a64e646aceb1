/**
 * Per-collector rates from the collector's own cumulative counters, in memory
 * only (nothing is stored per push), with fixed bounds: at most
 * `maxCollectors` collectors (least recently reporting evicted first), at
 * most `maxSeries` series each, and at most `SLOTS` samples per series
 * covering about the last `windowMs`.
 *
 * Rates use the data points' own timestamps, not arrival times, so network
 * jitter and batching do not skew them. Each series keeps a running total of
 * increments: a cumulative value that went down (or whose start time moved)
 * is a restart, and the new value is the increment from 0; a DELTA point's
 * value is its increment. Because only the running total matters, samples in
 * between can be thinned out without losing counts across resets.
 *
 * Each point's increment also goes into the collector's last hour in 15 s
 * buckets (history.ts), bounded with it.
 */
import type { Signal } from "../../shared/config-records.ts";
import { BoundedMap } from "../lib/bounded-map.ts";
import type { ComponentKind, Meaning } from "./names.ts";
import { BUCKETS, History, historyFields, STEP_MS, type HistoryAnswer } from "./history.ts";

export const DEFAULT_WINDOW_MS = 5 * 60_000;
/** Samples kept per counter series; the newest one is overwritten until the spacing allows a new one. */
export const SLOTS = 8;

export type Temporality = "cumulative" | "delta" | "gauge";

export class Series {
  /** Interleaved [time ms, running total] pairs, oldest at `head`. */
  readonly ring = new Float64Array(SLOTS * 2);
  head = 0;
  count = 0;
  total = 0;
  lastRaw = NaN;
  lastStart = 0;
  /** The last point's temporality (null before any): stall.ts names a stall by cumulative values only. */
  temporality: Temporality | null = null;
  /** Gauges: the newest value. */
  value = NaN;
  /** The last point's increment and the point time it accrued since (NaN: unknown), for the history. */
  increment = 0;
  since = NaN;
  /** The history fields it adds to (history.ts). */
  readonly fields: number;

  constructor(
    readonly meaning: Meaning,
    readonly component: string,
    readonly signal: Signal | null,
  ) {
    this.fields = historyFields(meaning, signal);
  }

  newestTime(): number {
    return this.count === 0 ? -Infinity : this.ring[((this.head + this.count - 1) % SLOTS) * 2]!;
  }

  private time(i: number): number {
    return this.ring[((this.head + i) % SLOTS) * 2]!;
  }

  private totalAt(i: number): number {
    return this.ring[((this.head + i) % SLOTS) * 2 + 1]!;
  }

  private push(t: number, total: number, windowMs: number): void {
    const spacing = windowMs / (SLOTS - 2);
    if (this.count >= 2 && this.time(this.count - 1) - this.time(this.count - 2) < spacing) {
      // The newest sample is not yet `spacing` past the one before: move it forward instead of adding one.
      const at = ((this.head + this.count - 1) % SLOTS) * 2;
      this.ring[at] = t;
      this.ring[at + 1] = total;
    } else {
      if (this.count === SLOTS) {
        this.head = (this.head + 1) % SLOTS;
        this.count--;
      }
      const at = ((this.head + this.count) % SLOTS) * 2;
      this.ring[at] = t;
      this.ring[at + 1] = total;
      this.count++;
    }
    // Keep at most one sample at or before the window's start, so the rate spans the whole window.
    while (this.count > 2 && this.time(1) <= t - windowMs) {
      this.head = (this.head + 1) % SLOTS;
      this.count--;
    }
  }

  /** Adds one point; false when it is not newer than the last one (a duplicate or out of order). */
  add(value: number, t: number, start: number, temporality: Temporality, windowMs: number): boolean {
    const previous = this.newestTime();
    if (t <= previous) return false;
    this.temporality = temporality;
    // A start time after the previous point is a restart (or a delta's interval): the increment accrued since then.
    const since = start > 0 && start < t ? Math.max(previous, start) : previous;
    if (temporality === "gauge") {
      this.value = value;
      this.since = Number.isFinite(since) ? since : t;
      this.push(t, 0, windowMs);
      return true;
    }
    if (this.count === 0 && start > 0 && start < t && t - start <= windowMs) {
      // A counter that started inside the window was 0 at its start time.
      this.push(start, 0, windowMs);
      if (temporality === "cumulative") this.lastRaw = 0;
    }
    let increment: number;
    this.since = Number.isFinite(since) ? since : t; // a first point without a start: its arrival alone
    if (temporality === "delta") {
      increment = value;
    } else if (Number.isNaN(this.lastRaw)) {
      increment = 0;
      this.since = NaN; // no baseline yet: nothing is known about any interval
    } else if (value < this.lastRaw || (start > this.lastStart && this.lastStart > 0)) {
      increment = value; // restarted: counted again from 0
    } else {
      increment = value - this.lastRaw;
    }
    this.lastRaw = value;
    this.lastStart = start;
    this.increment = increment;
    this.total += increment;
    this.value = value;
    this.push(t, this.total, windowMs);
    return true;
  }

  /** Per second over the kept samples; null with fewer than two. */
  rate(): number | null {
    if (this.count < 2) return null;
    const seconds = (this.time(this.count - 1) - this.time(0)) / 1000;
    return seconds > 0 ? (this.totalAt(this.count - 1) - this.totalAt(0)) / seconds : null;
  }

  spanSeconds(): number {
    return this.count < 2 ? 0 : (this.time(this.count - 1) - this.time(0)) / 1000;
  }
}

export class CollectorWindow {
  readonly series = new Map<string, Series>();
  readonly history = new History();
  lastReportAt = 0;
  /** Newest data-point time seen, in ms. */
  newest = 0;
  /**
   * For stall detection (stall.ts), on the server's clock: when a receiver's
   * accepted counter last grew (0: never seen to), and when one was last
   * reported at all, grown or not.
   */
  acceptedAt = 0;
  acceptedReportedAt = 0;
}

export interface ComponentRate {
  id: string;
  kind: ComponentKind;
  signal: Signal;
  /** Records per second; null when the collector reports nothing that measures it. */
  in: number | null;
  out: number | null;
  errors: number | null;
}

export interface CollectorRates {
  /** Seconds the rates cover (the longest series span). */
  window: number;
  components: ComponentRate[];
  process: { cpu: number | null; memoryRss: number | null; uptime: number | null };
  lastReportAt: string | null;
}

export interface WindowLimits {
  windowMs?: number;
  maxCollectors?: number;
  maxSeries?: number;
  /** The server's clock (ms): arrival times, and so the history's buckets. */
  now?: () => number;
}

/** Outcome of one point: ok; stale (not newer than the series' last point); full (the collector already has `maxSeries` series). */
export type Added = "ok" | "stale" | "full";

export class ThroughputWindow {
  readonly windowMs: number;
  readonly maxCollectors: number;
  readonly maxSeries: number;
  readonly now: () => number;
  private readonly collectors: BoundedMap<string, CollectorWindow>;

  constructor(limits: WindowLimits = {}) {
    this.windowMs = limits.windowMs ?? DEFAULT_WINDOW_MS;
    this.maxCollectors = limits.maxCollectors ?? 10_000;
    this.collectors = new BoundedMap(this.maxCollectors);
    this.maxSeries = limits.maxSeries ?? 128;
    this.now = limits.now ?? Date.now;
  }

  /** The collector's window, made most recently used; `now` is its arrival time. */
  touch(collectorId: string, now = this.now()): CollectorWindow {
    let w = this.collectors.get(collectorId);
    if (w) this.collectors.delete(collectorId);
    else w = new CollectorWindow();
    // Set again, it is the newest: the least recently reporting collector goes first when the window is full.
    this.collectors.set(collectorId, w);
    w.lastReportAt = now;
    return w;
  }

  /** The collector's series `key` (its metric and attributes), if it has it. */
  series(w: CollectorWindow, key: string): Series | undefined {
    return w.series.get(key);
  }

  /** A new series, or "full" when the collector has `maxSeries` that are all still reported. */
  create(w: CollectorWindow, key: string, meaning: Meaning, component: string, signal: Signal | null): Series | "full" {
    if (w.series.size >= this.maxSeries && !this.dropStale(w)) return "full";
    const s = new Series(meaning, component, signal);
    w.series.set(key, s);
    return s;
  }

  /** One point of a series; `t` and `start` in ms (start 0 when unknown). */
  addPoint(w: CollectorWindow, s: Series, value: number, t: number, start: number, temporality: Temporality): Added {
    if (!s.add(value, t, start, temporality, this.windowMs)) return "stale";
    if (t > w.newest) w.newest = t;
    if (s.meaning.kind === "receiver" && s.meaning.field === "inout" && temporality !== "gauge") {
      w.acceptedReportedAt = w.lastReportAt;
      if (s.increment > 0) w.acceptedAt = w.lastReportAt;
    }
    if (s.fields !== 0 && !Number.isNaN(s.since)) {
      // The point's interval, moved to end at its arrival (history.ts).
      const gauge = temporality === "gauge";
      w.history.record(s.fields, w.lastReportAt - (t - s.since), w.lastReportAt, gauge ? value : s.increment, gauge);
    }
    return "ok";
  }

  /** `series`, `create` and `addPoint` in one call. */
  add(
    w: CollectorWindow,
    key: string,
    meaning: Meaning,
    component: string,
    signal: Signal | null,
    value: number,
    t: number,
    start: number,
    temporality: Temporality,
  ): Added {
    const s = this.series(w, key) ?? this.create(w, key, meaning, component, signal);
    return s === "full" ? "full" : this.addPoint(w, s, value, t, start, temporality);
  }

  /** Removes series with nothing inside the window (a component reconfigured away); true when room was made. */
  private dropStale(w: CollectorWindow): boolean {
    const before = w.series.size;
    for (const [key, s] of w.series) if (s.newestTime() < w.newest - this.windowMs) w.series.delete(key);
    return w.series.size < before;
  }

  /** The collector's last hour in 15 s buckets up to its last report, or null when it has pushed nothing this process remembers. */
  history(collectorId: string): HistoryAnswer | null {
    const w = this.collectors.get(collectorId);
    return w ? w.history.read(w.lastReportAt) : null;
  }

  /**
   * Fleet-wide records/s in over the hour before `end` (default now, on the
   * server's clock), complete 15 s buckets, summed over every collector it
   * keeps, each with how many collectors measured something in it: only
   * buckets where some collector did, so a silence is a gap, not a zero.
   */
  fleetHistory(end = this.now()): { time: number; value: number; collectors: number }[] {
    const sums = new Float64Array(BUCKETS);
    const counts = new Uint32Array(BUCKETS);
    const mine = new Uint8Array(BUCKETS);
    for (const w of this.collectors.values()) {
      mine.fill(0);
      w.history.addRecordsIn(end, sums, mine);
      for (let i = 0; i < BUCKETS; i++) counts[i]! += mine[i]!;
    }
    const first = Math.floor(end / STEP_MS) - BUCKETS;
    const points: { time: number; value: number; collectors: number }[] = [];
    for (let i = 0; i < BUCKETS; i++) if (counts[i]! > 0) points.push({ time: (first + i + 1) * STEP_MS, value: sums[i]!, collectors: counts[i]! });
    return points;
  }

  /** Every collector's window, least recently reporting first (do not change them). */
  entries(): IterableIterator<[string, CollectorWindow]> {
    return this.collectors.entries();
  }

  forget(collectorId: string): void {
    this.collectors.delete(collectorId);
  }

  /** Counts for bounds checks and health. */
  size(): { collectors: number; series: number; samples: number } {
    let series = 0;
    let samples = 0;
    for (const w of this.collectors.values()) {
      series += w.series.size;
      for (const s of w.series.values()) samples += s.count;
    }
    return { collectors: this.collectors.size, series, samples };
  }

  /** The collector's current rates, or null when it has pushed nothing this process remembers. */
  rates(collectorId: string): CollectorRates | null {
    const w = this.collectors.get(collectorId);
    if (!w) return null;
    const components = new Map<string, ComponentRate>();
    const process: CollectorRates["process"] = { cpu: null, memoryRss: null, uptime: null };
    const add = (a: number | null, b: number | null) => (b === null ? a : (a ?? 0) + b);
    let window = 0;
    const since = w.newest - this.windowMs;
    for (const s of w.series.values()) {
      if (s.newestTime() < since) continue; // a component no longer reported
      const m = s.meaning;
      if (m.kind === "process") {
        if (m.field === "cpu") process.cpu = add(process.cpu, s.rate());
        else if (m.field === "memoryRss") process.memoryRss = add(process.memoryRss, s.value);
        else process.uptime = Math.max(process.uptime ?? 0, s.value);
        window = Math.max(window, s.spanSeconds());
        continue;
      }
      if (s.signal === null) continue;
      const id = `${m.kind} ${s.component} ${s.signal}`;
      let c = components.get(id);
      if (!c) {
        c = { id: s.component, kind: m.kind, signal: s.signal, in: null, out: null, errors: null };
        components.set(id, c);
      }
      const r = s.rate() ?? 0;
      window = Math.max(window, s.spanSeconds());
      if (m.field === "inout") {
        c.in = add(c.in, r);
        c.out = add(c.out, r);
      } else if (m.field === "in") {
        c.in = add(c.in, r);
      } else if (m.field === "out") {
        c.out = add(c.out, r);
      } else {
        c.errors = add(c.errors, r);
        // Refused and failed items came in too; a processor's refusals are already in its incoming count.
        if (m.kind !== "processor") c.in = add(c.in, r);
      }
    }
    const order = { receiver: 0, processor: 1, exporter: 2 };
    return {
      window,
      components: [...components.values()].sort(
        (a, b) => order[a.kind] - order[b.kind] || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0) || (a.signal < b.signal ? -1 : 1),
      ),
      process,
      lastReportAt: w.lastReportAt ? new Date(w.lastReportAt).toISOString() : null,
    };
  }
}
