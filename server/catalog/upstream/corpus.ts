/**
 * The generated corpus the conformance checks render (test support, used by
 * upstream/conform.test.ts and test/upstream/otelcol-validate.test.ts): each
 * catalog type with its optional fields set in turn, on every signal it
 * carries, for unknown and known collector versions around each upstream rename.
 */
import type { PipelineRecord, Signal, TopologyNode } from "../../../shared/config-records.ts";
import type { CollectorConfigInput } from "../render-input.ts";
import { SIGNALS } from "../../../shared/config-records.ts";
import { findType } from "../registry.ts";
import { validateComponentConfig } from "../validate.ts";
import { parseCollectorVersion, versionProblem } from "../versions.ts";
/** Unknown, just before and at each rename, and the newest the tables were read at. */
export const VERSIONS = [null, "0.120.0", "0.143.0", "0.144.0", "0.146.0", "0.159.0", "9.3.1"];

export const SOURCES: Record<string, Record<string, unknown>[]> = {
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

export const DESTINATIONS: Record<string, Record<string, unknown>[]> = {
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

export function processorNodes(signal: Signal): TopologyNode[] {
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
export const READS_REFUSED_ON_ALLOY = new Set(["hostmetrics", "k8s_events"]);

/** Whether the tables say the collector version can run the source's receiver (unknown versions get the current form). */
export function runsSource(sourceType: string, config: Record<string, unknown>, version: string | null): boolean {
  const target = { version: parseCollectorVersion(version) };
  const type = findType("source", sourceType)!;
  return versionProblem(type.otelcol(validateComponentConfig("source", sourceType, config), target).type, target) === undefined;
}

/** One collector: the source variant through every processor (or, with `batchOnly`, the batch ones) into the destination variant. */
export function corpusInput(
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

export interface CorpusEntry {
  name: string;
  signal: Signal;
  input: CollectorConfigInput;
  /** The Runtime R input, when both the source and the destination run on Alloy and the version is unknown. */
  alloy: CollectorConfigInput | null;
}

/** Every source variant into every destination variant through every processor, on each signal both carry, at each version in `versions` that runs the source. */
export function* corpus(versions: readonly (string | null)[] = VERSIONS): Generator<CorpusEntry> {
  for (const signal of SIGNALS) {
    for (const [sourceType, sourceConfigs] of Object.entries(SOURCES)) {
      if (!findType("source", sourceType)!.signals.includes(signal)) continue;
      for (const [destinationType, destinationConfigs] of Object.entries(DESTINATIONS)) {
        const type = findType("destination", destinationType)!;
        if (!type.signals.includes(signal)) continue;
        for (const [i, sourceConfig] of sourceConfigs.entries()) {
          for (const [j, destinationConfig] of destinationConfigs.entries()) {
            for (const version of versions) {
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
