/**
 * A small Prometheus registry: counters, gauges and histograms with fixed
 * buckets, each with fixed label names, and their exposition in the text
 * format (version 0.0.4) or OpenMetrics 1.0.
 *
 * Why not prom-client: it is not among the dependencies, pulls in Node's
 * cluster and perf_hooks machinery we do not use, and its `labels(...)` looks a
 * series up by building a key string on every call. Here a caller takes a
 * series' child once (`labels(...)` at start-up, or cached by the caller in
 * a map keyed by a number or an object) and the hot path is a field
 * increment: no allocation per request.
 */

export type MetricType = "counter" | "gauge" | "histogram";

export type Format = "text" | "openmetrics";

export const CONTENT_TYPES: Record<Format, string> = {
  text: "text/plain; version=0.0.4; charset=utf-8",
  openmetrics: "application/openmetrics-text; version=1.0.0; charset=utf-8",
};

/** OpenMetrics when the scraper asks for it (Prometheus does, with a q-value), else the classic text format. */
export function formatFor(accept: string | null): Format {
  return accept?.includes("application/openmetrics-text") ? "openmetrics" : "text";
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

interface Metric {
  readonly name: string;
  readonly help: string;
  readonly type: MetricType;
  write(out: string[], format: Format): void;
}

abstract class Family<C> implements Metric {
  abstract readonly type: MetricType;
  private readonly children = new Map<string, { values: readonly string[]; child: C }>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {
    if (!NAME.test(name)) throw new Error(`metric name ${JSON.stringify(name)} is not valid`);
    for (const label of labelNames) {
      if (!LABEL.test(label) || label.startsWith("__") || label === "le") throw new Error(`label name ${JSON.stringify(label)} is not valid`);
    }
  }

  protected abstract create(): C;

  /** The series of these label values, made once; keep it, the lookup builds a key. */
  labels(...values: string[]): C {
    if (values.length !== this.labelNames.length) throw new Error(`${this.name} takes ${this.labelNames.length} label values, got ${values.length}`);
    const key = values.join("\u0000");
    let entry = this.children.get(key);
    if (!entry) this.children.set(key, (entry = { values, child: this.create() }));
    return entry.child;
  }

  /** Drops every series (a gauge recomputed at scrape, so vanished label values disappear). */
  reset(): void {
    this.children.clear();
  }

  protected series(): Iterable<{ values: readonly string[]; child: C }> {
    return this.children.values();
  }

  protected labelText(values: readonly string[], extra?: string): string {
    const parts = this.labelNames.map((name, i) => `${name}="${escapeLabel(values[i]!)}"`);
    if (extra !== undefined) parts.push(extra);
    return parts.length === 0 ? "" : `{${parts.join(",")}}`;
  }

  protected header(out: string[], _format: Format, familyName = this.name): void {
    out.push(`# HELP ${familyName} ${escapeHelp(this.help)}`, `# TYPE ${familyName} ${this.type}`);
  }

  abstract write(out: string[], format: Format): void;
}

export class CounterChild {
  value = 0;
  inc(by = 1): void {
    this.value += by;
  }
}

export class Counter extends Family<CounterChild> {
  readonly type = "counter";

  constructor(name: string, help: string, labelNames: readonly string[] = []) {
    super(name, help, labelNames);
    if (!name.endsWith("_total")) throw new Error(`counter ${name} must end in _total`);
  }

  protected create(): CounterChild {
    return new CounterChild();
  }

  write(out: string[], format: Format): void {
    // OpenMetrics names the family without the _total its sample carries.
    this.header(out, format, format === "openmetrics" ? this.name.slice(0, -"_total".length) : this.name);
    for (const { values, child } of this.series()) out.push(`${this.name}${this.labelText(values)} ${formatValue(child.value)}`);
  }
}

export class GaugeChild {
  value = 0;
  set(value: number): void {
    this.value = value;
  }
  inc(by = 1): void {
    this.value += by;
  }
  dec(by = 1): void {
    this.value -= by;
  }
}

export class Gauge extends Family<GaugeChild> {
  readonly type = "gauge";

  protected create(): GaugeChild {
    return new GaugeChild();
  }

  write(out: string[], format: Format): void {
    this.header(out, format);
    for (const { values, child } of this.series()) out.push(`${this.name}${this.labelText(values)} ${formatValue(child.value)}`);
  }
}

export class HistogramChild {
  /** Per bucket, not cumulative; the last slot is +Inf. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += value;
    this.count++;
  }
}

export class Histogram extends Family<HistogramChild> {
  readonly type = "histogram";

  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    readonly buckets: readonly number[],
  ) {
    super(name, help, labelNames);
    for (let i = 1; i < buckets.length; i++) if (!(buckets[i]! > buckets[i - 1]!)) throw new Error(`${name}: buckets must increase`);
  }

  protected create(): HistogramChild {
    return new HistogramChild(this.buckets);
  }

  write(out: string[], format: Format): void {
    this.header(out, format);
    for (const { values, child } of this.series()) {
      let cumulative = 0;
      for (let i = 0; i <= this.buckets.length; i++) {
        cumulative += child.counts[i]!;
        const le = i < this.buckets.length ? formatValue(this.buckets[i]!, format) : "+Inf";
        out.push(`${this.name}_bucket${this.labelText(values, `le="${le}"`)} ${formatValue(cumulative)}`);
      }
      out.push(`${this.name}_sum${this.labelText(values)} ${formatValue(child.sum)}`);
      out.push(`${this.name}_count${this.labelText(values)} ${formatValue(child.count)}`);
    }
  }
}

export class Registry {
  private readonly metrics: Metric[] = [];
  private readonly collectors: (() => void | Promise<void>)[] = [];

  register<M extends Metric>(metric: M): M {
    if (this.metrics.some((m) => m.name === metric.name)) throw new Error(`metric ${metric.name} is registered twice`);
    this.metrics.push(metric);
    return metric;
  }

  /** Runs before every exposition: sets the gauges computed at scrape time. */
  onCollect(collect: () => void | Promise<void>): void {
    this.collectors.push(collect);
  }

  async expose(format: Format = "text"): Promise<string> {
    await Promise.all(this.collectors.map((collect) => collect()));
    const out: string[] = [];
    for (const metric of this.metrics) metric.write(out, format);
    if (format === "openmetrics") out.push("# EOF");
    return out.join("\n") + "\n";
  }
}

/** Go's strconv formatting as the text format expects: integers without a point, the special values spelled out. */
function formatValue(value: number, format: Format = "text"): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Number.POSITIVE_INFINITY) return "+Inf";
  if (value === Number.NEGATIVE_INFINITY) return "-Inf";
  // OpenMetrics' canonical bucket bounds are floats ("1.0"); values may be integers.
  if (format === "openmetrics" && Number.isInteger(value)) return value.toFixed(1);
  return String(value);
}

function escapeLabel(value: string): string {
  return value.replace(/[\\"\n]/g, (c) => (c === "\n" ? "\\n" : "\\" + c));
}

function escapeHelp(value: string): string {
  return value.replace(/[\\\n]/g, (c) => (c === "\n" ? "\\n" : "\\\\"));
}
