/**
 * One behaviour on both runtimes: every golden case's log filters, and a set
 * of routes per source type, run over sample events as each runtime's
 * receivers shape them (testdata/records.ts: Runtime R through the Alloy
 * blocks svc renders). Where the parity table says a route runs the same,
 * both runtimes must keep and drop the same records; where it says not, the
 * Alloy rendering is refused with a message naming the condition.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { parse } from "yaml";
import { findType, validateComponentConfig } from "../catalog/index.ts";
import { LOG_RECORD_SHAPES, LOG_SOURCE_TYPES, type LogSourceType, type RecordPart } from "../catalog/sources/log-records.ts";
import type { PipelineRecord, SourceRecord } from "../../shared/config-records.ts";
import type { CollectorConfigInput } from "../catalog/render-input.ts";
import { ValidationError, type ErrorDetail } from "../errors.ts";
import type { AnyValue, KeyValue, LogRecord } from "../ottl/otlp.ts";
import { dryRun, type ChainProcessor } from "../ottl/dryrun.ts";
import { block } from "../catalog/alloy-syntax.ts";
import { renderAlloy } from "./alloy.ts";
import { renderOtelcol } from "./otelcol.ts";
import { runtimeRProblems } from "./parity.ts";
import { renderPipelinePreview } from "./preview.ts";
import { planCollector, planPreview, type Flow, type Plan } from "./plan.ts";
import { loadCase, TESTDATA } from "./testdata/load.ts";
import { alloyRecord, eventsFor, otelcolRecord, SAMPLE_EVENTS } from "./testdata/records.ts";

/** Every linear path of processors from the flow's entry to a destination. */
function paths(flow: Flow): ChainProcessor[][] {
  const byName = new Map(flow.processors.map((p) => [p.name, p]));
  const walk = (names: string[]): ChainProcessor[][] =>
    names.flatMap((name) => {
      const p = byName.get(name);
      if (!p) return [[]];
      const here: ChainProcessor = { nodeId: p.nodeId, type: p.type.type, config: p.config };
      return walk(
        p.next
          .filter((t) => t.kind === "processor")
          .map((t) => t.name)
          .concat(p.next.some((t) => t.kind === "destination") ? ["<out>"] : []),
      ).map((rest) => [here, ...rest]);
    });
  return walk(flow.entry.map((t) => (t.kind === "processor" ? t.name : "<out>")));
}

/** Whether one record survives a chain, and the record that comes out. */
function run(record: LogRecord, chain: ChainProcessor[]): LogRecord | null {
  const input = { resourceLogs: [{ scopeLogs: [{ logRecords: [structuredClone(record)] }] }] };
  const out = dryRun(input, chain).output.resourceLogs;
  return out[0]?.scopeLogs?.[0]?.logRecords?.[0] ?? null;
}

interface Verdict {
  /** Per event: kept by each linear path, on Runtime O and Runtime R. */
  otelcol: boolean[][];
  alloy: boolean[][];
}

/** Runs a logs flow's sample events through both runtimes' records. */
function decisions(plan: Plan, flow: Flow): Verdict {
  const source = plan.sources.find((s) => s.name === flow.source)!;
  const blocks = source.type.alloy!(source.config as never, source.name, block("output", undefined, []));
  const events = eventsFor(source.type.type as keyof typeof SAMPLE_EVENTS, source.config);
  const chains = paths(flow);
  const kept = (record: LogRecord | null) => chains.map((chain) => record !== null && run(record, chain) !== null);
  return {
    otelcol: events.map((e) => kept(otelcolRecord(e, source.config))),
    alloy: events.map((e) => kept(alloyRecord(e, source.name, blocks))),
  };
}

function problemsOf(plan: Plan, flow: Flow): ErrorDetail[] {
  const source = plan.sources.find((s) => s.name === flow.source)!;
  return runtimeRProblems(
    source.type.type,
    flow.processors.map((p) => ({ type: p.type.type, config: p.config, path: `pipelines[${flow.pipelineId}].topology.nodes[${p.nodeId}].processor.config` })),
  );
}

function refusal(render: () => unknown): ValidationError {
  try {
    render();
  } catch (error) {
    if (error instanceof ValidationError) return error;
    throw error;
  }
  throw new Error("expected the Alloy rendering to be refused");
}

describe("every golden case's log filters decide the same on both runtimes", () => {
  const cases = readdirSync(TESTDATA, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  for (const name of cases) {
    test(name, () => {
      const c = loadCase(name);
      const plan = c.input ? planCollector(c.input) : planPreview(c.preview!.pipeline, c.preview!.sources, c.preview!.destinations);
      for (const flow of plan.flows.filter((f) => f.signal === "logs")) {
        if (problemsOf(plan, flow).length > 0) {
          expect(refusal(() => renderAlloy(c.input!)).details.map((d) => d.path)).toEqual(problemsOf(plan, flow).map((d) => d.path));
          continue;
        }
        // Sources without modelled records: one receiver on both runtimes (kafka), or records that differ as a
        // whole (k8s_events), whose reads problemsOf refuses; what remains reads nothing of the record.
        const type = plan.sources.find((s) => s.name === flow.source)!.type.type;
        if (!(type in SAMPLE_EVENTS)) {
          expect(LOG_SOURCE_TYPES as readonly string[]).not.toContain(type);
          continue;
        }
        const verdict = decisions(plan, flow);
        expect(verdict.alloy).toEqual(verdict.otelcol);
      }
    });
  }
});

// ---- Routes per source type ------------------------------------------------------------------

const SOURCE_CONFIGS: Record<LogSourceType, Record<string, unknown>[]> = {
  syslog: [
    { protocol: "rfc5424", transport: "tcp" },
    { protocol: "rfc3164", transport: "udp" },
  ],
  journald: [{}, { units: ["sshd", "cron.service"] }],
  filelog: [{ include: ["/var/log/nginx/*.log"] }],
  otlp: [{}],
};

function collectorWith(type: LogSourceType, config: Record<string, unknown>, conditions: string[]): CollectorConfigInput {
  const source: SourceRecord = { id: "src", name: "in", type, config } as SourceRecord;
  const pipeline = {
    id: "p",
    name: "p",
    signal: "logs",
    topology: {
      nodes: [
        { id: "in", kind: "source" },
        { id: "f", kind: "processor", processor: { type: "filter", config: { logs: { log_record: conditions } } } },
        { id: "out", kind: "destination", ref: "dst" },
      ],
      edges: [
        { id: "e1", source: "in", target: "f" },
        { id: "e2", source: "f", target: "out" },
      ],
    },
  } as unknown as PipelineRecord;
  return {
    collector: { id: "c", name: "c" },
    sources: new Map([[source.id, source]]),
    destinations: new Map([["dst", { id: "dst", name: "backend", type: "otlphttp", config: { endpoint: "https://logs.example.com" } } as never]]),
    pipelines: new Map([[pipeline.id, pipeline]]),
    activations: {
      collectorId: "c",
      sources: [{ sourceId: "src", configOverrides: {} }],
      destinations: [{ destinationId: "dst", configOverrides: {}, tags: {} }],
    },
    routes: [{ id: "r", collectorId: "c", sourceId: "src", pipelineId: "p" }],
  } as CollectorConfigInput;
}

/** Conditions over each record part; which ones a source may use on Alloy follows from the table. */
const CONDITIONS = [
  "severity_number < SEVERITY_NUMBER_WARN",
  'severity_text == "warning"',
  'IsMatch(body, "healthz")',
  'body["MESSAGE"] == "unit message 7"',
  'attributes["hostname"] == "web-1"',
  'attributes["message"] != nil and IsMatch(attributes["message"], "GET")',
  'attributes["log.file.name"] == "access.log"',
  'attributes["priority"] == 28',
  'attributes["facility_text"] == "daemon"',
  'attributes["loki.attribute.labels"] != nil',
  'attributes["filename"] != nil or attributes["job"] != nil',
  'resource.attributes["host.name"] == nil',
];

describe("routes per source type: the same decisions, or refused on Runtime R", () => {
  for (const type of LOG_SOURCE_TYPES) {
    for (const config of SOURCE_CONFIGS[type]) {
      for (const condition of CONDITIONS) {
        test(`${type} ${JSON.stringify(config)}: ${condition}`, () => {
          const input = collectorWith(type, config, [condition]);
          renderOtelcol(input);
          const plan = planCollector(input);
          const flow = plan.flows[0]!;
          const problems = problemsOf(plan, flow);
          if (problems.length > 0) {
            const error = refusal(() => renderAlloy(input));
            expect(error.details[0]!.path).toBe("pipelines[p].topology.nodes[f].processor.config.logs.log_record[0]");
            expect(error.details[0]!.message).toContain("on Alloy (remote config)");
            return;
          }
          renderAlloy(input);
          const verdict = decisions(plan, flow);
          expect(verdict.alloy).toEqual(verdict.otelcol);
        });
      }
    }
  }

  test("a syslog severity filter keeps warnings and worse on both runtimes (issue 19, defect 6)", () => {
    const input = collectorWith("syslog", SOURCE_CONFIGS.syslog[0]!, ["severity_number < SEVERITY_NUMBER_WARN"]);
    const plan = planCollector(input);
    const verdict = decisions(plan, plan.flows[0]!);
    const kept = verdict.alloy.map(([k]) => k);
    expect(kept).toEqual(verdict.otelcol.map(([k]) => k));
    // severities 0..4 kept, 5..7 dropped; the last warning kept.
    expect(kept).toEqual([true, true, true, true, true, false, false, false, true]);
  });

  test("a syslog body filter is refused on Runtime R with the reason, and renders for Runtime O", () => {
    const input = collectorWith("syslog", SOURCE_CONFIGS.syslog[0]!, ['IsMatch(body, "healthz")']);
    expect(renderOtelcol(input)).toContain("healthz");
    const error = refusal(() => renderAlloy(input));
    expect(error.status).toBe(400);
    expect(error.details).toEqual([
      {
        path: "pipelines[p].topology.nodes[f].processor.config.logs.log_record[0]",
        message:
          'condition "IsMatch(body, \\"healthz\\")" reads body, and a syslog record\'s body is the whole syslog line as received (priority, header and message) on OpenTelemetry Collector (OpAMP) but the message part only on Alloy (remote config), so it would act on other records on an Alloy collector; read a field both runtimes share, or run this source on the OpenTelemetry Collector (OpAMP)',
      },
    ]);
  });
});

describe("metric sources", () => {
  /** A metrics route from `type` through one processor. */
  function metricsCollector(type: string, config: Record<string, unknown>, processor: { type: string; config: Record<string, unknown> }): CollectorConfigInput {
    const input = collectorWith("filelog", {}, []);
    const pipeline = input.pipelines.get("p")!;
    const nodes = pipeline.topology.nodes.map((n) => (n.id === "f" ? { ...n, processor } : n));
    return {
      ...input,
      sources: new Map([["src", { id: "src", name: "in", type, config } as SourceRecord]]),
      pipelines: new Map([["p", { ...pipeline, signal: "metrics", topology: { ...pipeline.topology, nodes } } as PipelineRecord]]),
    };
  }
  const byName = { type: "filter", config: { metrics: { metric: ['name == "system.cpu.time"'] } } };
  const byAttribute = { type: "attributes", config: { actions: [{ key: "state", action: "delete" }] } };

  test("host metrics differ as a whole on Alloy (node_exporter names): a metric condition or an attribute action is refused there", () => {
    for (const processor of [byName, byAttribute]) {
      const input = metricsCollector("hostmetrics", {}, processor);
      renderOtelcol(input);
      const error = refusal(() => renderAlloy(input));
      expect(error.details[0]!.message).toContain("node_cpu_seconds_total");
    }
    expect(refusal(() => renderAlloy(metricsCollector("hostmetrics", {}, byName))).details[0]!.path).toBe(
      "pipelines[p].topology.nodes[f].processor.config.metrics.metric[0]",
    );
    // A processor that reads nothing (batch) renders on both.
    const batch = metricsCollector("hostmetrics", {}, { type: "batch", config: {} });
    expect(renderOtelcol(batch)).toContain("batch/p_in_f:");
    expect(renderAlloy(batch)).toContain('otelcol.processor.batch "p_in_f" {');
  });

  test("Prometheus scrapes go through the same receiver translation on both runtimes: a metric filter renders for Alloy", () => {
    const input = metricsCollector("prometheus", { targets: ["localhost:9100"] }, byName);
    // Runtime O: the prometheus receiver feeds the filter.
    const otelcol = parse(renderOtelcol(input)) as { processors: Record<string, unknown>; service: { pipelines: Record<string, unknown> } };
    expect(otelcol.service.pipelines["metrics/p_in"]).toEqual({ receivers: ["prometheus/in"], processors: ["filter/p_in_f"], exporters: ["otlphttp/backend"] });
    expect(otelcol.processors["filter/p_in_f"]).toMatchObject({ metrics: { metric: ['name == "system.cpu.time"'] } });
    // Runtime R: the scrape goes through otelcol.receiver.prometheus, the same translation, into the same condition.
    const alloy = renderAlloy(input);
    /** A top-level block's text: from its header to its closing brace at the start of a line. */
    const blockOf = (header: string) => alloy.slice(alloy.indexOf(`${header} {`), alloy.indexOf("\n}\n", alloy.indexOf(`${header} {`)));
    expect(blockOf('prometheus.scrape "in"')).toMatch(/forward_to\s*=\s*\[otelcol\.receiver\.prometheus\.in\.receiver\]/);
    expect(blockOf('otelcol.receiver.prometheus "in"')).toMatch(/metrics = \[otelcol\.processor\.filter\.p_in_f\.input\]/);
    expect(blockOf('otelcol.processor.filter "p_in_f"')).toContain('metric = [`name == "system.cpu.time"`]');
  });
});

test("the Alloy preview of a pipeline whose syslog source node meets a body filter is refused; the otelcol preview renders", () => {
  const input = collectorWith("syslog", SOURCE_CONFIGS.syslog[0]!, ['IsMatch(body, "healthz")']);
  const pipeline = input.pipelines.get("p")!;
  const withRef = { ...pipeline, topology: { ...pipeline.topology, nodes: pipeline.topology.nodes.map((n) => (n.id === "in" ? { ...n, ref: "src" } : n)) } };
  expect(renderPipelinePreview(withRef, input.sources, input.destinations, "otelcol")).toContain("healthz");
  const error = refusal(() => renderPipelinePreview(withRef, input.sources, input.destinations, "alloy"));
  expect(error.details.map((d) => d.path)).toEqual(["pipelines[p].topology.nodes[f].processor.config.logs.log_record[0]"]);
});

describe("what a processor reads", () => {
  const at = (type: string, config: Record<string, unknown>) => [{ type, config, path: "p" }];

  test("a condition reading a differing field twice is named once; conditions on shared fields pass", () => {
    const filter = {
      logs: { log_record: ['IsMatch(body, "a") or body == "b"', 'attributes["hostname"] == "h"', 'attributes["version"] == 1', 'attributes["facility"] == 3'] },
    };
    expect(runtimeRProblems("syslog", at("filter", filter)).map((p) => p.path)).toEqual(["p.logs.log_record[0]", "p.logs.log_record[2]"]);
    expect(runtimeRProblems("filelog", at("filter", filter))).toEqual([]);
    expect(runtimeRProblems("otlp", at("filter", filter))).toEqual([]);
  });

  test("attribute actions read their key; resource actions the resource, alike on both runtimes for every log source", () => {
    const actions = [
      { key: "source", action: "upsert", value: "net" },
      { key: "structured_data", action: "delete" },
      { key: "priority", action: "delete" },
    ];
    expect(runtimeRProblems("syslog", at("attributes", { actions }))).toEqual([
      {
        path: "p.actions[1].key",
        message: expect.stringContaining('the delete action on "structured_data" reads attributes["structured_data"], and a syslog record\'s attributes are'),
      },
    ]);
    expect(runtimeRProblems("journald", at("attributes", { actions }))).toEqual([]);
    expect(runtimeRProblems("syslog", at("resource", { attributes: actions }))).toEqual([]);
    expect(runtimeRProblems("syslog", at("batch", {}))).toEqual([]);
  });

  test("a transform's log statements read their paths, targets included; its metric statements the metric as a whole", () => {
    const transform = {
      log_statements: [
        { context: "resource", statements: ['set(attributes["env"], "prod")'] },
        { context: "log", statements: ['set(attributes["hostname"], "h")', 'replace_pattern(body, "a", "b")'] },
      ],
    };
    expect(runtimeRProblems("syslog", at("transform", transform))).toEqual([
      {
        path: "p.log_statements[1].statements[1]",
        message: expect.stringContaining('statement "replace_pattern(body, \\"a\\", \\"b\\")" reads body, and a syslog record\'s body is'),
      },
    ]);
    expect(runtimeRProblems("otlp", at("transform", transform))).toEqual([]);
    const metrics = { metric_statements: [{ context: "datapoint", statements: ['set(attributes["x"], "y")'] }] };
    expect(runtimeRProblems("hostmetrics", at("transform", metrics)).map((p) => p.path)).toEqual(["p.metric_statements[0].statements[0]"]);
    expect(runtimeRProblems("prometheus", at("transform", metrics))).toEqual([]);
  });
});

// ---- The table itself ------------------------------------------------------------------------

function attributeMap(list: KeyValue[] | undefined): Map<string, AnyValue | undefined> {
  return new Map((list ?? []).map((kv) => [kv.key, kv.value]));
}

function part(record: LogRecord, p: RecordPart): unknown {
  switch (p) {
    case "body":
      return record.body;
    case "severity":
      return [record.severityNumber ?? 0, record.severityText ?? ""];
    case "attributes":
      return attributeMap(record.attributes);
    case "resource":
    case "scope":
      return undefined; // no receiver here sets either
  }
}

describe("the parity table says what the modelled records show", () => {
  for (const type of LOG_SOURCE_TYPES) {
    test(type, () => {
      const sourceType = findType("source", type)!;
      for (const config of SOURCE_CONFIGS[type]) {
        const valid = validateComponentConfig("source", type, config);
        const blocks = sourceType.alloy!(valid as never, "in", block("output", undefined, []));
        for (const event of eventsFor(type, valid)) {
          const o = otelcolRecord(event, valid);
          const r = alloyRecord(event, "in", blocks);
          expect(r === null).toBe(o === null);
          if (o === null || r === null) continue;
          for (const p of Object.keys(LOG_RECORD_SHAPES[type]) as RecordPart[]) {
            const differs = LOG_RECORD_SHAPES[type][p].differs;
            if (differs === true) continue;
            if (Array.isArray(differs)) {
              const [a, b] = [part(o, p) as Map<string, unknown>, part(r, p) as Map<string, unknown>];
              for (const key of differs) a.delete(key);
              expect(b).toEqual(a);
            } else {
              expect(part(r, p)).toEqual(part(o, p));
            }
          }
        }
      }
    });
  }
});

describe("filelog parsing builds the same record on both runtimes", () => {
  /** Attributes in key order, so the comparison does not depend on the order each runtime sets them. */
  const normal = (r: LogRecord | null) =>
    r && {
      body: r.body,
      severityNumber: r.severityNumber ?? 0,
      severityText: r.severityText,
      attributes: [...(r.attributes ?? [])].sort((a, b) => (a.key < b.key ? -1 : 1)),
    };
  const parsers: Record<string, unknown>[] = [
    { format: "json", severity: { field: "log.level" } },
    { format: "json", severity: { field: "level" } },
    { format: "regex", regex: "^(?P<time>\\S+ \\S+) (?P<level>[A-Z]+) \\[(?P<thread>[^\\]]+)\\] (?P<message>.*)$", severity: { field: "level" } },
  ];
  for (const parser of parsers) {
    test(JSON.stringify(parser), () => {
      const config = validateComponentConfig("source", "filelog", { include: ["/var/log/*"], parser });
      const blocks = findType("source", "filelog")!.alloy!(config, "f", block("output", undefined, []));
      const records = SAMPLE_EVENTS.filelog.map((e) => [normal(otelcolRecord(e, config)), normal(alloyRecord(e, "f", blocks))]);
      for (const [otelcol, alloy] of records) expect(alloy).toEqual(otelcol);
      // The samples exercise the mapping: mapped, unmapped and numeric levels, and lines the parser refuses.
      const severities = new Set(records.map(([r]) => `${r!.severityNumber}/${r!.severityText}`));
      expect(severities.size).toBeGreaterThan(1);
    });
  }
});
