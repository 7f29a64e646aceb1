/**
 * Runtime R: the Grafana Alloy components the catalog renders, with the
 * arguments and blocks we emit and their Go types (the `alloy:"…"` tags of
 * each component's Arguments struct), and the stability level each registers
 * with (`Stability: featuregate.…` beside `Name:`, also the `stage:` of its
 * docs/sources/reference/components page). Alloy runs at
 * generally-available unless started with `--stability.level`, and its
 * remotecfg controller inherits that level, so one component of a lower level
 * makes the whole remote config fail to load.
 *
 * grafana/alloy at 66ebea85 (2026-08-21, after v1.19.0-rc.3).
 */
import type { AlloyBody, AlloyComponent, AlloyMember, UpstreamSource, ValueType } from "./types.ts";

const REPO = "grafana/alloy";
const REF = "66ebea856dffb242f921775e9552a133f60dc5c1";
const at = (path: string): UpstreamSource => ({ repo: REPO, path, ref: REF });

const attr = (value: ValueType): AlloyMember => ({ attr: value });
const block = (body: AlloyBody): AlloyMember => ({ block: body });
const blocks = (body: AlloyBody): AlloyMember => ({ block: body, repeatable: true });

/** `output { logs = […] metrics = […] traces = […] }` (otelcol.ConsumerArguments, internal/component/otelcol/consumer.go). */
const OUTPUT: AlloyMember = block({ logs: attr({ list: "capsule" }), metrics: attr({ list: "capsule" }), traces: attr({ list: "capsule" }) });
const strings = { list: "string" } as const;
const targets = { list: { map: "string" } } as const;
const receivers = { list: "capsule" } as const;
/** ottl.ErrorMode, which Alloy's otelcol processors take as is. */
const ERROR_MODE = { oneOf: ["ignore", "silent", "propagate"] } as const;
/** otelcol.AttrActionKeyValue.Action, as the collector's attraction.Action. */
/** ContextID.UnmarshalText, transform.go. */
const TRANSFORM_CONTEXT = { oneOf: ["resource", "scope", "span", "spanevent", "metric", "datapoint", "log"] } as const;
const ACTION = { oneOf: ["insert", "update", "upsert", "delete", "hash", "extract", "convert"] } as const;

// ---- OTLP exporter client settings and file parsing (issue 24 part 10) ----
/**
 * otelcol.TLSClientArguments with TLSSetting squashed (internal/component/otelcol/config_tls.go): note
 * `server_name`, which the collector calls server_name_override.
 */
const CLIENT_TLS: AlloyMember = block({
  insecure: attr("bool"),
  insecure_skip_verify: attr("bool"),
  ca_file: attr("string"),
  cert_file: attr("string"),
  key_file: attr("string"),
  server_name: attr("string"),
});
/** otelcol.CompressionType.UnmarshalText (config_compression.go): gzip, zlib, deflate, snappy, zstd, none; svc renders four. */
const COMPRESSION = attr({ oneOf: ["gzip", "zstd", "snappy", "none"] });
/** otelcol.RetryArguments (config_retry.go); SetToDefault 5s / 30s / 5m, multiplier 1.5 (Validate wants > 1). */
const RETRY_ON_FAILURE: AlloyMember = block({
  enabled: attr("bool"),
  initial_interval: attr("go-duration"),
  max_interval: attr("go-duration"),
  max_elapsed_time: attr("go-duration"),
});
/** otelcol.QueueArguments (config_queue.go): num_consumers int, queue_size int64 (Validate: > 0 when enabled). */
const SENDING_QUEUE: AlloyMember = block({ enabled: attr("bool"), num_consumers: attr("int"), queue_size: attr("int") });
/**
 * loki.process (internal/component/loki/process/process.go, GA) with its `stage.multiline` block
 * (stages/multiline.go MultilineConfig: firstline, matched against each line; max_wait_time, which Validate wants > 0).
 */
const LOKI_PROCESS: AlloyComponent = {
  stability: "generally-available",
  source: at("internal/component/loki/process/process.go"),
  arguments: {
    forward_to: attr(receivers),
    "stage.multiline": blocks({ firstline: attr("string"), max_wait_time: attr("go-duration") }),
  },
};
// ---- end ----

/** Kafka and Kubernetes event sources (issue 24, catalog growth), at the same commit. */
const SOURCE_COMPONENTS_KAFKA_K8S: Readonly<Record<string, AlloyComponent>> = {
  "otelcol.receiver.kafka": {
    stability: "generally-available",
    source: at("internal/component/otelcol/receiver/kafka/kafka.go"),
    arguments: {
      brokers: attr(strings),
      // `alloy:"protocol_version,attr"` without optional: required.
      protocol_version: attr("string"),
      client_id: attr("string"),
      group_id: attr("string"),
      initial_offset: attr({ oneOf: ["latest", "earliest"] }),
      // KafkaReceiverTopicEncodingConfig: `topic` since v1.9.0 (075cd0c0), deprecated for `topics` in v1.13.0 (f1f457fa).
      logs: block({ topic: attr("string"), topics: attr(strings), encoding: attr("string") }),
      metrics: block({ topic: attr("string"), topics: attr(strings), encoding: attr("string") }),
      traces: block({ topic: attr("string"), topics: attr(strings), encoding: attr("string") }),
      // otelcol.TLSClientArguments (config_tls.go).
      tls: block({ insecure_skip_verify: attr("bool"), ca_file: attr("string") }),
      // otelcol.KafkaAuthenticationArguments, KafkaSASLArguments (config_kafka.go); password is an alloytypes.Secret, which takes a string.
      authentication: block({ sasl: block({ mechanism: attr("string"), username: attr("string"), password: attr("string") }) }),
      output: OUTPUT,
    },
  },
  "loki.source.kubernetes_events": {
    stability: "generally-available",
    source: at("internal/component/loki/source/kubernetes_events/kubernetes_events.go"),
    arguments: { forward_to: attr(receivers), namespaces: attr(strings) },
  },
};

export const ALLOY_COMPONENTS: Readonly<Record<string, AlloyComponent>> = {
  "otelcol.receiver.otlp": {
    stability: "generally-available",
    source: at("internal/component/otelcol/receiver/otlp/otlp.go"),
    arguments: {
      grpc: block({ endpoint: attr("string") }), // otelcol.GRPCServerArguments, config_grpc.go
      http: block({ endpoint: attr("string") }), // otelcol.HTTPServerArguments, config_http.go
      output: OUTPUT,
    },
  },
  "otelcol.receiver.loki": {
    stability: "generally-available",
    source: at("internal/component/otelcol/receiver/loki/loki.go"),
    arguments: { output: OUTPUT },
  },
  "otelcol.receiver.prometheus": {
    stability: "generally-available",
    source: at("internal/component/otelcol/receiver/prometheus/prometheus.go"),
    arguments: { output: OUTPUT },
  },
  "otelcol.processor.batch": {
    stability: "generally-available",
    source: at("internal/component/otelcol/processor/batch/batch.go"),
    arguments: { timeout: attr("go-duration"), send_batch_size: attr("uint32"), output: OUTPUT },
  },
  "otelcol.processor.filter": {
    stability: "generally-available",
    source: at("internal/component/otelcol/processor/filter/filter.go"),
    arguments: {
      error_mode: attr(ERROR_MODE),
      logs: block({ log_record: attr(strings) }), // types.go LogConfig
      metrics: block({ metric: attr(strings), datapoint: attr(strings) }), // MetricConfig
      traces: block({ span: attr(strings), spanevent: attr(strings) }), // TraceConfig
      output: OUTPUT,
    },
  },
  "otelcol.processor.attributes": {
    stability: "generally-available",
    source: at("internal/component/otelcol/processor/attributes/attributes.go"),
    // otelcol.AttrActionKeyValue, internal/component/otelcol/config_attraction.go
    arguments: { action: blocks({ key: attr("string"), action: attr(ACTION), value: attr("scalar") }), output: OUTPUT },
  },
  "otelcol.processor.transform": {
    stability: "generally-available",
    source: at("internal/component/otelcol/processor/transform/transform.go"),
    arguments: {
      error_mode: attr(ERROR_MODE),
      log_statements: blocks({ context: attr(TRANSFORM_CONTEXT), statements: attr(strings) }),
      metric_statements: blocks({ context: attr(TRANSFORM_CONTEXT), statements: attr(strings) }),
      trace_statements: blocks({ context: attr(TRANSFORM_CONTEXT), statements: attr(strings) }),
      output: OUTPUT,
    },
  },
  "otelcol.exporter.otlp": {
    stability: "generally-available",
    source: at("internal/component/otelcol/exporter/otlp/otlp.go"),
    arguments: {
      // otelcol.GRPCClientArguments (config_grpc.go), TLSClientArguments (config_tls.go)
      client: block({ endpoint: attr("string"), headers: attr({ map: "string" }), compression: COMPRESSION, tls: CLIENT_TLS }),
      retry_on_failure: RETRY_ON_FAILURE,
      sending_queue: SENDING_QUEUE,
    },
  },
  "otelcol.exporter.otlphttp": {
    stability: "generally-available",
    source: at("internal/component/otelcol/exporter/otlphttp/otlphttp.go"),
    // otelcol.HTTPClientArguments, config_http.go
    arguments: {
      client: block({ endpoint: attr("string"), headers: attr({ map: "string" }), compression: COMPRESSION, tls: CLIENT_TLS }),
      retry_on_failure: RETRY_ON_FAILURE,
      sending_queue: SENDING_QUEUE,
    },
  },
  "otelcol.exporter.prometheus": {
    stability: "generally-available",
    source: at("internal/component/otelcol/exporter/prometheus/prometheus.go"),
    arguments: { forward_to: attr(receivers) },
  },
  "otelcol.exporter.debug": {
    stability: "experimental",
    source: at("internal/component/otelcol/exporter/debug/debug.go"),
    arguments: { verbosity: attr("string") },
  },
  "loki.source.file": {
    stability: "generally-available",
    source: at("internal/component/loki/source/file/file.go"),
    arguments: { targets: attr(targets), forward_to: attr(receivers), tail_from_end: attr("bool") },
  },
  "loki.source.journal": {
    stability: "generally-available",
    source: at("internal/component/loki/source/journal/types.go"),
    arguments: { forward_to: attr(receivers), relabel_rules: attr("capsule"), path: attr("string") },
  },
  "loki.source.syslog": {
    stability: "generally-available",
    source: at("internal/component/loki/source/syslog/syslog.go"),
    arguments: {
      // ListenerConfig, types.go
      // ListenerConfig.Validate: protocol tcp or udp; syslog_format per loki/source/syslog/config/config.go.
      listener: blocks({ address: attr("string"), protocol: attr({ oneOf: ["tcp", "udp"] }), syslog_format: attr({ oneOf: ["rfc5424", "rfc3164", "raw"] }) }),
      forward_to: attr(receivers),
      relabel_rules: attr("capsule"),
    },
  },
  "loki.relabel": {
    stability: "generally-available",
    source: at("internal/component/loki/relabel/relabel.go"),
    arguments: {
      forward_to: attr(receivers),
      // alloy_relabel.Config, internal/component/common/relabel/relabel.go; its Validate() wants a replace
      // rule's target_label to be a Prometheus label name, which the constant names in
      // sources/log-records.ts (SYSLOG_LABELS) are.
      rule: blocks({ source_labels: attr(strings), regex: attr("string"), action: attr("string"), target_label: attr("string") }),
    },
  },
  "loki.process": LOKI_PROCESS,
  "local.file_match": {
    stability: "generally-available",
    source: at("internal/component/local/file_match/file.go"),
    arguments: { path_targets: attr(targets) },
  },
  "prometheus.scrape": {
    stability: "generally-available",
    source: at("internal/component/prometheus/scrape/scrape.go"),
    arguments: {
      targets: attr(targets),
      forward_to: attr(receivers),
      job_name: attr("string"),
      scrape_interval: attr("go-duration"),
      scrape_timeout: attr("go-duration"),
    },
    // SetToDefault: ScrapeInterval 1m, ScrapeTimeout 10s (Prometheus' DefaultGlobalConfig).
    defaults: { scrape_interval: "1m", scrape_timeout: "10s" },
    // Arguments.Validate: "scrape_timeout (…) greater than scrape_interval (…)".
    rules: [{ rule: "not-greater", left: "scrape_timeout", right: "scrape_interval", source: at("internal/component/prometheus/scrape/scrape.go") }],
  },
  "prometheus.exporter.unix": {
    stability: "generally-available",
    source: at("internal/component/prometheus/exporter/unix/config.go"),
    arguments: { set_collectors: attr(strings) },
  },
  ...SOURCE_COMPONENTS_KAFKA_K8S,
  "prometheus.remote_write": {
    stability: "generally-available",
    source: at("internal/component/prometheus/remotewrite/types.go"),
    // EndpointOptions
    arguments: { endpoint: blocks({ url: attr("string"), headers: attr({ map: "string" }) }) },
  },
};

/** The stability level Alloy loads components at unless told otherwise. */
export const ALLOY_DEFAULT_STABILITY = "generally-available";
