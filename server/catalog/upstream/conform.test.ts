/**
 * Configs the renderers write, held against the upstream tables: every
 * golden, and the cases no one type's corpus holds (each type's own corpus
 * is rendered by conformance.test.ts).
 */
import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { attr, block } from "../alloy-syntax.ts";
import { alloyDocument } from "../../render/alloy.ts";
import { HostEnvValue } from "../host-env.ts";
import { renderOtelcol } from "../../render/otelcol.ts";
import { planCollector, planPreview } from "../../render/plan.ts";
import { renderPipelinePreview } from "../../render/preview.ts";
import { loadCase, TESTDATA } from "../../render/testdata/load.ts";
import { DESTINATION_TYPES, findType, PROCESSOR_TYPES, SOURCE_TYPES } from "../registry.ts";
import { validateComponentConfig } from "../validate.ts";
import { alloyProblems, otelcolProblems } from "./conform.ts";
import { corpusInput, READS_REFUSED_ON_ALLOY, runsSource, SOURCES, VERSIONS } from "./corpus.ts";
import { SHARED_UPSTREAM } from "./shared.ts";
import { ALLOY_COMPONENTS, otelcolComponent, upstreamSources } from "./tables.ts";

describe("rendered configs conform to upstream", () => {
  const cases = readdirSync(TESTDATA, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  for (const name of cases) {
    test(`golden ${name}, both runtimes`, () => {
      const c = loadCase(name);
      if (c.preview) {
        const { pipeline, sources, destinations } = c.preview;
        expect(otelcolProblems(renderPipelinePreview(pipeline, sources, destinations, "otelcol"))).toEqual([]);
        expect(alloyProblems(alloyDocument(planPreview(pipeline, sources, destinations, "alloy"), []).blocks)).toEqual([]);
        return;
      }
      const sources = [...c.input!.sources.values()];
      for (const version of VERSIONS) {
        if (!sources.every((s) => runsSource(s.type, s.config, version))) continue;
        expect(otelcolProblems(renderOtelcol({ ...c.input!, collector: { ...c.input!.collector, version } }))).toEqual([]);
      }
      // A source Alloy cannot run refuses the whole Runtime R render (its golden is the refusal).
      if (sources.some((s) => findType("source", s.type)?.alloy === undefined)) {
        expect(() => planCollector(c.input!, "alloy")).toThrow("cannot run on Alloy (remote config)");
        return;
      }
      expect(alloyProblems(alloyDocument(planCollector(c.input!, "alloy"), []).blocks)).toEqual([]);
    });
  }
});

describe("options one runtime refuses", () => {
  test("filelog line_end_pattern conforms on Runtime O (Runtime R refuses it: filelog.test.ts)", () => {
    const source: [string, Record<string, unknown>] = ["filelog", { include: ["/var/log/*.log"], multiline: { line_end_pattern: "\\}$" } }];
    for (const version of VERSIONS) expect(otelcolProblems(renderOtelcol(corpusInput("logs", source, ["otlp", { endpoint: "gw:4317" }], version)))).toEqual([]);
  });
});

describe("the checks can fail", () => {
  test("an unknown key, a wrong type and a bad duration are reported", () => {
    const yaml = [
      "receivers: { otlp/a: { protocols: { grpc: { endpoint: x } } } }",
      "processors: { batch/b: { send_batch_size: 4294967296, timeout: 30s1m, extra: 1 } }",
      "exporters: { otlp/c: { endpoint: 5 }, logging/d: {} }",
      "service: { pipelines: {} }",
    ].join("\n");
    expect(otelcolProblems(yaml)).toEqual([
      "processors.batch/b.send_batch_size: 4294967296 is not a uint32",
      "processors.batch/b.extra: is not a key upstream takes here",
      "exporters.otlp/c.endpoint: 5 is not a string",
      "exporters.logging/d: no upstream exporter has type 'logging'",
    ]);
  });

  test("a non-GA component, an unknown argument and a broken Validate() rule are reported", () => {
    expect(
      alloyProblems([
        block("otelcol.exporter.debug", "d", [attr("verbosity", "basic")]),
        block("prometheus.scrape", "s", [attr("scrape_interval", "5s"), attr("honor_labels", true)]),
      ]),
    ).toEqual([
      "otelcol.exporter.debug.d: is experimental; Alloy loads only generally-available components by default",
      "prometheus.scrape.s.honor_labels: is not an argument or block upstream takes here",
      "prometheus.scrape.s: scrape_timeout is greater than scrape_interval, which Validate() refuses",
    ]);
  });

  test("a value from the host's environment is a string: fine for a header, not for a bool", () => {
    const client = (tls: boolean) =>
      block("otelcol.exporter.otlp", "o", [
        block("client", undefined, [
          attr("endpoint", "gw:4317"),
          attr("headers", { A: new HostEnvValue("TOKEN") }),
          tls && block("tls", undefined, [attr("insecure", new HostEnvValue("INSECURE"))]),
        ]),
      ]);
    expect(alloyProblems([client(false)])).toEqual([]);
    expect(alloyProblems([client(true)])).toEqual([
      'otelcol.exporter.otlp.o.client.tls.insecure: sys.env("INSECURE") is a string, not what upstream takes here',
    ]);
  });
});

describe("the tables", () => {
  test("every type the catalog renders has a table entry; the only non-GA Alloy component is debug's, which no type renders", () => {
    const nonGa = [...ALLOY_COMPONENTS.values()].filter((c) => c.stability !== "generally-available").map((c) => c.name);
    expect(nonGa).toEqual(["otelcol.exporter.debug"]);
    for (const t of DESTINATION_TYPES) if (t.alloyEntry !== undefined) expect(ALLOY_COMPONENTS.get(t.alloyEntry)?.stability).toBe("generally-available");
    for (const t of PROCESSOR_TYPES) expect(ALLOY_COMPONENTS.get(t.alloyEntry)?.stability).toBe("generally-available");
    for (const t of SOURCE_TYPES)
      expect(otelcolComponent("receiver", t.otelcol(validateComponentConfig("source", t.type, SOURCES[t.type]![0])).type)).toBeDefined();
  });

  test("every shared fact names its upstream file and revision (each type's own: conformance.test.ts)", () => {
    for (const s of upstreamSources(SHARED_UPSTREAM)) {
      expect(s.repo).toMatch(/^[\w.-]+\/[\w.-]+$/);
      expect(s.path).toMatch(/\.(go|yaml|md)$/);
      expect(s.ref).toMatch(/^([0-9a-f]{40}|v\d+\.\d+\.\d+)$/);
    }
  });
});

describe("Validate() rules hold for every accepted input", () => {
  /** A small deterministic PRNG (mulberry32), so a failure reproduces. */
  function random(seed: number): () => number {
    let a = seed;
    return () => {
      a = (a + 0x6d2b79f5) | 0;
      let t = Math.imul(a ^ (a >>> 15), 1 | a);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }
  const UNITS = ["ns", "us", "ms", "s", "m", "h", "d", "w", "y", ""];

  /** Duration-like text: 1-3 number+unit parts, sometimes with a fraction, in any order. */
  function durationText(next: () => number): string {
    const parts = 1 + Math.floor(next() * 3);
    let text = "";
    for (let i = 0; i < parts; i++) {
      const value = Math.floor(next() * 120);
      const fraction = next() < 0.15 ? `.${Math.floor(next() * 10)}` : "";
      text += `${value}${fraction}${UNITS[Math.floor(next() * UNITS.length)]}`;
    }
    return text;
  }

  test("prometheus and hostmetrics intervals: accepted ⇒ both renderings conform, scrape_timeout <= scrape_interval on Alloy", () => {
    const next = random(19);
    let accepted = 0;
    for (let i = 0; i < 3000; i++) {
      const interval = durationText(next);
      for (const [type, config] of [
        ["prometheus", { targets: ["a:9100"], scrape_interval: interval }],
        ["hostmetrics", { collection_interval: interval }],
      ] as const) {
        let valid: Record<string, unknown>;
        try {
          valid = validateComponentConfig("source", type, config);
        } catch {
          continue;
        }
        accepted++;
        const input = corpusInput("metrics", [type, valid], ["otlp", { endpoint: "gw:4317" }], null);
        expect([interval, otelcolProblems(renderOtelcol(input))]).toEqual([interval, []]);
        const alloy = corpusInput("metrics", [type, valid], ["otlp", { endpoint: "gw:4317" }], null, READS_REFUSED_ON_ALLOY.has(type));
        expect([interval, alloyProblems(alloyDocument(planCollector(alloy, "alloy"), []).blocks)]).toEqual([interval, []]);
      }
    }
    expect(accepted).toBeGreaterThan(200);
  }, 60_000);
});
