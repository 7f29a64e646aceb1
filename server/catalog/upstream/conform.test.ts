/**
 * Every config the renderers write, held against the upstream tables: every
 * golden, and a corpus generated from the catalog (each type with its
 * optional fields set in turn, on every signal it carries, for unknown and
 * known collector versions around each upstream rename).
 */
import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import type { PipelineRecord, Signal, TopologyNode } from "../../../shared/config-records.ts";
import type { CollectorConfigInput } from "../../render/input.ts";
import { SIGNALS } from "../../../shared/config-records.ts";
import { attr, block } from "../../render/alloy-syntax.ts";
import { alloyDocument } from "../../render/alloy.ts";
import { HostEnvValue } from "../../render/host-env.ts";
import { renderOtelcol } from "../../render/otelcol.ts";
import { planCollector, planPreview } from "../../render/plan.ts";
import { renderPipelinePreview } from "../../render/preview.ts";
import { loadCase, TESTDATA } from "../../render/testdata/load.ts";
import { DESTINATION_TYPES, findType, PROCESSOR_TYPES, SOURCE_TYPES } from "../registry.ts";
import { validateComponentConfig } from "../validate.ts";
import { parseCollectorVersion, versionProblem } from "../versions.ts";
import { ALLOY_COMPONENTS } from "./alloy.ts";
import { alloyProblems, otelcolProblems } from "./conform.ts";
import { FILELOG_PARSE_SOURCES, OTELCOL_COMPONENTS, OTLP_CLIENT_SOURCES } from "./otelcol.ts";

/** Unknown, just before and at each rename, and the newest the tables were read at. */
const VERSIONS = [null, "0.120.0", "0.143.0", "0.144.0", "0.146.0", "0.159.0", "9.3.1"];

const SOURCES: Record<string, Record<string, unknown>[]> = {
  otlp: [{}, { grpc: { enabled: false } }, { http: { enabled: false }, grpc: { endpoint: "0.0.0.0:4317" } }],
  filelog: [
    { include: ["/var/log/*.log"] },
    { include: ["/var/log/a.log", "/srv/**/*.log"], exclude: ["/var/log/x.log"], start_at: "beginning" },
    { include: ["/var/log/*.log"], exclude: ["/var/log/x.log", "/var/log/*.gz"] },
    // Parsing and multiline (filelog-parse.ts); line_end_pattern, which Alloy refuses, is checked on its own below.
    { include: ["/var/log/*.json"], parser: { format: "json", timestamp: { field: "ts", layout: "%Y-%m-%dT%H:%M:%S%z" }, severity: { field: "log.level" } } },
    { include: ["/var/log/*.log"], parser: { format: "regex", regex: "^(?P<ts>\\S+) (?P<level>\\w+) (?P<msg>.*)$", severity: { field: "level" } }, multiline: { line_start_pattern: "^\\S" } },
  ],
  journald: [{}, { units: ["sshd", "nginx.service"], directory: "/var/log/journal" }],
  hostmetrics: [{}, { collection_interval: "5s", scrapers: ["cpu", "disk", "filesystem", "load", "memory", "network", "paging", "processes", "system"] }, { collection_interval: "1.5s" }, { collection_interval: "10s" }],
  syslog: [{}, { transport: "udp", protocol: "rfc3164", listen_address: ":514" }],
  prometheus: [
    { targets: ["localhost:9100"] },
    { targets: ["a:9100", "b:9100"], scrape_interval: "5s", job_name: "node" },
    { targets: ["a:9100"], scrape_interval: "1h30m" },
    { targets: ["a:9100"], scrape_interval: "500ms" },
    { targets: ["a:9100"], scrape_interval: "9s999ms" },
  ],
  kafka: [
    { brokers: ["kafka:9092"] },
    {
      brokers: ["a:9093", "b:9093"],
      protocol_version: "3.6.0",
      group_id: "g",
      client_id: "c",
      initial_offset: "earliest",
      logs: { topic: "^app-.*", encoding: "text" },
      metrics: { topic: "m", encoding: "otlp_json" },
      traces: { topic: "t", encoding: "zipkin_json" },
      tls: { enabled: true, insecure_skip_verify: true, ca_file: "/etc/ssl/ca.pem" },
      sasl: { mechanism: "PLAIN", username: "u", password: { secret: "0190a8c2-7b3e-7c41-9d2e-5f6a7b8c9d01" } },
    },
    { brokers: ["kafka:9092"], tls: { enabled: true }, sasl: { username: "u", password: { env: "KAFKA_PASSWORD" } } },
  ],
  k8s_cluster: [{}, { auth_type: "kubeConfig", collection_interval: "30s", node_conditions_to_report: ["Ready", "DiskPressure"], distribution: "openshift" }],
  kubeletstats: [{}, { auth_type: "none", endpoint: "http://node-1:10255", insecure_skip_verify: true, collection_interval: "1m", metric_groups: ["volume"] }],
  k8s_events: [{}, { namespaces: ["default", "kube-system"] }],
};

/** Header values in each stored form: a secret (rendered as its marker), one from the host's environment, one not secret. */
const SECRET = { secret: "0190a8c2-7b3e-7c41-9d2e-5f6a7b8c9d01" };
const FROM_HOST = { env: "TOKEN" };
const plain = (value: string) => ({ value, secret: false });

/** Every OTLP client setting (otlp-client.ts). */
const CLIENT_SETTINGS = {
  tls: { insecure_skip_verify: true, ca_file: "/opt/certs/ca.crt", cert_file: "/opt/certs/c.crt", key_file: "/opt/certs/c.key", server_name_override: "gw.internal" },
  compression: "zstd",
  retry_on_failure: { enabled: true, initial_interval: "1.5s", max_interval: "1m", max_elapsed_time: "0" },
  sending_queue: { enabled: true, num_consumers: 3, queue_size: 9007199254740991 },
};

const DESTINATIONS: Record<string, Record<string, unknown>[]> = {
  otlp: [
    { endpoint: "gw:4317" },
    { endpoint: "gw:4317", tls: { insecure: true }, headers: { Authorization: SECRET, "X-A": plain("1"), "X-B": FROM_HOST } },
    { endpoint: "gw:4317", ...CLIENT_SETTINGS, compression: "snappy" },
  ],
  otlphttp: [
    { endpoint: "https://otlp.example.com", headers: { "X-Key": FROM_HOST, Authorization: SECRET } },
    { endpoint: "https://otlp.example.com", ...CLIENT_SETTINGS, sending_queue: { enabled: false } },
  ],
  debug: [{ verbosity: "detailed" }],
  prometheusremotewrite: [{ endpoint: "http://mimir:9009/api/v1/push", headers: { "X-Scope-OrgID": plain("t"), Authorization: FROM_HOST, "X-Key": SECRET } }],
  loki: [{ endpoint: "http://loki:3100", tenant_id: "t1", headers: { A: plain("b"), Authorization: SECRET, "X-Key": FROM_HOST } }],
};

const ACTIONS = [
  { key: "s", action: "insert", value: "x$y" },
  { key: "i", action: "update", value: -42 },
  { key: "f", action: "upsert", value: 1.5e-7 },
  { key: "big", action: "upsert", value: 9007199254740991 },
  { key: "b", action: "upsert", value: true },
  { key: "gone", action: "delete" },
  { key: "mail", action: "hash" },
];

const FILTERS: Record<Signal, Record<string, unknown>> = {
  logs: { error_mode: "silent", logs: { log_record: ['attributes["path"] == "/health"'] } },
  metrics: { metrics: { metric: ['name == "x"'], datapoint: ["value_int < 0"] } },
  traces: { error_mode: "propagate", traces: { span: ['name == "ping"'], spanevent: ['name == "e"'] } },
};

const TRANSFORMS: Record<Signal, Record<string, unknown>> = {
  logs: {
    log_statements: [
      { context: "resource", statements: ['set(attributes["env"], "prod") where attributes["env"] == nil'] },
      // Fields every log source delivers alike on both runtimes (render/parity.ts refuses the others on Alloy).
      { context: "log", statements: ['replace_pattern(attributes["path"], "token=\\\\S+", "token=***") where attributes["path"] != nil'] },
    ],
  },
  metrics: { error_mode: "silent", metric_statements: [{ context: "datapoint", statements: ["limit(attributes, 10, [])"] }] },
  traces: { error_mode: "propagate", trace_statements: [{ context: "span", statements: ['delete_key(attributes, "secret")'] }] },
};

function processorNodes(signal: Signal): TopologyNode[] {
  const specs = [
    { type: "filter", config: FILTERS[signal] },
    { type: "batch", config: {} },
    { type: "batch", config: { send_batch_size: 4294967295, timeout: "1.5s" } },
    { type: "attributes", config: { actions: ACTIONS } },
    { type: "resource", config: { attributes: ACTIONS } },
    { type: "transform", config: TRANSFORMS[signal] },
  ];
  return specs.map((processor, i) => ({ id: `p${i}`, kind: "processor", processor }));
}

/**
 * Host metrics differ as a whole on Alloy (render/parity.ts), which refuses
 * processors that read them: their Alloy renderings run through the batch
 * processors only.
 */
const READS_REFUSED_ON_ALLOY = new Set(["hostmetrics", "k8s_events"]);

/** Whether the tables say the collector version can run the source's receiver (unknown versions get the current form). */
function runsSource(sourceType: string, config: Record<string, unknown>, version: string | null): boolean {
  const target = { version: parseCollectorVersion(version) };
  const type = findType("source", sourceType)!;
  return versionProblem(type.otelcol(validateComponentConfig("source", sourceType, config), target).type, target) === undefined;
}

/** One collector: the source variant through every processor (or, with `batchOnly`, the batch ones) into the destination variant. */
function corpusInput(
  signal: Signal,
  source: [string, Record<string, unknown>],
  destination: [string, Record<string, unknown>],
  version: string | null,
  batchOnly = false,
): CollectorConfigInput {
  const processors = processorNodes(signal).filter((n) => !batchOnly || n.processor!.type === "batch");
  const nodes: TopologyNode[] = [{ id: "in", kind: "source" }, ...processors, { id: "out", kind: "destination", ref: "d" }];
  const edges = nodes.slice(1).map((n, i) => ({ id: `e${i}`, source: nodes[i]!.id, target: n.id }));
  const pipeline: PipelineRecord = { id: "p", name: "p", signal, topology: { nodes, edges } };
  return {
    collector: { id: "c", name: "c", version },
    sources: new Map([["s", { id: "s", name: "s", type: source[0], config: source[1] }]]),
    destinations: new Map([["d", { id: "d", name: "d", type: destination[0], config: destination[1] }]]),
    pipelines: new Map([["p", pipeline]]),
    activations: { collectorId: "c", sources: [{ sourceId: "s", configOverrides: {} }], destinations: [{ destinationId: "d", configOverrides: {}, tags: {} }] },
    routes: [{ id: "r", collectorId: "c", sourceId: "s", pipelineId: "p" }],
  };
}

function* corpus(): Generator<{ name: string; signal: Signal; input: CollectorConfigInput; alloy: CollectorConfigInput | null }> {
  for (const signal of SIGNALS) {
    for (const [sourceType, sourceConfigs] of Object.entries(SOURCES)) {
      if (!findType("source", sourceType)!.signals.includes(signal)) continue;
      for (const [destinationType, destinationConfigs] of Object.entries(DESTINATIONS)) {
        const type = findType("destination", destinationType)!;
        if (!type.signals.includes(signal)) continue;
        for (const [i, sourceConfig] of sourceConfigs.entries()) {
          for (const [j, destinationConfig] of destinationConfigs.entries()) {
            for (const version of VERSIONS) {
              if (!runsSource(sourceType, sourceConfig, version)) continue;
              yield {
                name: `${signal} ${sourceType}#${i} → ${destinationType}#${j} @${version}`,
                signal,
                input: corpusInput(signal, [sourceType, sourceConfig], [destinationType, destinationConfig], version),
                alloy:
                  type.alloy !== undefined && findType("source", sourceType)!.alloy !== undefined && version === null
                    ? corpusInput(signal, [sourceType, sourceConfig], [destinationType, destinationConfig], version, READS_REFUSED_ON_ALLOY.has(sourceType))
                    : null,
              };
            }
          }
        }
      }
    }
  }
}

describe("the corpus covers the catalog", () => {
  test("every source, destination and processor type has corpus entries", () => {
    expect(Object.keys(SOURCES).sort()).toEqual(SOURCE_TYPES.map((t) => t.type).sort());
    expect(Object.keys(DESTINATIONS).sort()).toEqual(DESTINATION_TYPES.map((t) => t.type).sort());
    const used = new Set(SIGNALS.flatMap((s) => processorNodes(s).map((n) => n.processor!.type)));
    expect([...used].sort()).toEqual(PROCESSOR_TYPES.map((t) => t.type).sort());
  });
});

describe("rendered configs conform to upstream", () => {
  test("the generated corpus, both runtimes", () => {
    let renders = 0;
    const problems: string[] = [];
    for (const entry of corpus()) {
      problems.push(...otelcolProblems(renderOtelcol(entry.input)).map((p) => `${entry.name} otelcol: ${p}`));
      if (entry.alloy) problems.push(...alloyProblems(alloyDocument(planCollector(entry.alloy, "alloy"), []).blocks).map((p) => `${entry.name} alloy: ${p}`));
      renders++;
    }
    expect(problems).toEqual([]);
    expect(renders).toBeGreaterThan(300);
  }, 60_000);

  const cases = readdirSync(TESTDATA, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name).sort();
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
        expect(() => planCollector(c.input!, "alloy")).toThrow("cannot run on Runtime R (Alloy)");
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
    const nonGa = Object.entries(ALLOY_COMPONENTS).filter(([, c]) => c.stability !== "generally-available").map(([name]) => name);
    expect(nonGa).toEqual(["otelcol.exporter.debug"]);
    for (const t of DESTINATION_TYPES) if (t.alloyEntry !== undefined) expect(ALLOY_COMPONENTS[t.alloyEntry]?.stability).toBe("generally-available");
    for (const t of PROCESSOR_TYPES) expect(ALLOY_COMPONENTS[t.alloyEntry]?.stability).toBe("generally-available");
    for (const t of SOURCE_TYPES) expect(OTELCOL_COMPONENTS[t.otelcol(validateComponentConfig("source", t.type, SOURCES[t.type]![0])).type]?.kind).toBe("receiver");
  });

  test("every fact names its upstream file and revision", () => {
    const sources = [
      ...Object.values(OTELCOL_COMPONENTS).flatMap((c) => [
        c.source,
        ...(c.renamed ? [c.renamed.source] : []),
        ...(c.keyChange ? [c.keyChange.source] : []),
        ...(c.minimumVersion ? [c.minimumVersion.source] : []),
      ]),
      ...Object.values(ALLOY_COMPONENTS).flatMap((c) => [c.source, ...(c.rules ?? []).map((r) => r.source)]),
      ...OTLP_CLIENT_SOURCES,
      ...FILELOG_PARSE_SOURCES,
    ];
    for (const s of sources) {
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
