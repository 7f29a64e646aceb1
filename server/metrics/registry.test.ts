import { describe, expect, test } from "bun:test";
import { within } from "../../test/opamp/helpers.ts";
import { parsePromText } from "../../test/promtext/promtext.ts";
import { Counter, formatFor, Gauge, Histogram, Registry } from "./registry.ts";

describe("the registry's exposition", () => {
  test("Prometheus' own parser reads every type, escaped label values and help, and special values", async () => {
    const registry = new Registry();
    const counter = registry.register(new Counter("t_requests_total", 'Requests with a \\ and a\nnewline "quoted".', ["path"]));
    counter.labels('a"b\\c\nd').inc(3);
    counter.labels("plain").inc();
    const gauge = registry.register(new Gauge("t_temperature_celsius", "A gauge.", []));
    gauge.labels().set(Number.NaN);
    const histogram = registry.register(new Histogram("t_duration_seconds", "A histogram.", ["route"], [0.1, 1]));
    const child = histogram.labels("/x");
    for (const v of [0.05, 0.1, 0.5, 3]) child.observe(v);
    const parsed = parsePromText(await registry.expose());
    expect(parsed.map((f) => [f.name, f.type])).toEqual([
      ["t_duration_seconds", "HISTOGRAM"],
      ["t_requests_total", "COUNTER"],
      ["t_temperature_celsius", "GAUGE"],
    ]);
    const requests = parsed.find((f) => f.name === "t_requests_total")!;
    expect(requests.help).toBe('Requests with a \\ and a\nnewline "quoted".');
    expect(requests.metrics.find((m) => m.labels.path === 'a"b\\c\nd')?.value).toBe(3);
    const duration = parsed.find((f) => f.name === "t_duration_seconds")!.metrics[0]!;
    // A value on a bound falls in that bucket (le: less than or equal).
    expect(duration.buckets).toEqual([
      { le: 0.1, count: 2 },
      { le: 1, count: 3 },
      { le: "+Inf", count: 4 },
    ]);
    expect(duration.sum).toBeCloseTo(3.65);
    expect(parsed.find((f) => f.name === "t_temperature_celsius")!.metrics[0]!.value as unknown).toBe("NaN");
    expect(duration.count).toBe(4);
  });

  test("names are checked, and counters end in _total", () => {
    expect(() => new Counter("t_requests", "x")).toThrow();
    expect(() => new Gauge("t-bad", "x", [])).toThrow();
    expect(() => new Histogram("t_h", "x", ["le"], [1])).toThrow();
    expect(() => new Histogram("t_h", "x", [], [1, 1])).toThrow();
  });

  test("OpenMetrics only when asked for", () => {
    expect(formatFor(null)).toBe("text");
    expect(formatFor("text/plain;version=0.0.4")).toBe("text");
    expect(formatFor("application/openmetrics-text;version=1.0.0,text/plain;q=0.5")).toBe("openmetrics");
  });
});

describe("scrape-time sources", () => {
  test("a failing or slow source leaves its families out and the rest is answered", async () => {
    const { ServerMetrics, SOURCE_DEADLINE_MS } = await import("./metrics.ts");
    const metrics = new ServerMetrics({
      eachCollector: () => new Promise(() => {}),
      rolloutStatus: () => Promise.reject(new Error("storage down")),
    });
    // The collectors source never answers: the scrape is answered anyway once the source's deadline passes.
    const parsed = parsePromText(await within(metrics.expose("text"), SOURCE_DEADLINE_MS + 20_000, "the scrape beside a source that never answers"));
    const names = parsed.map((f) => f.name);
    expect(names).not.toContain("svc_collectors");
    expect(names).not.toContain("svc_rollout_state");
    expect(names).toContain("svc_build_info");
    const errors = parsed.find((f) => f.name === "svc_metrics_source_errors_total")!;
    expect(Object.fromEntries(errors.metrics.map((m) => [m.labels.source, m.value]))).toEqual({ collectors: 1, rollout: 1 });
  });
});
