/**
 * Runtime O: the OpenTelemetry Collector components the catalog renders,
 * keyed by the type the collector YAML names them with (`receivers.otlp/…`),
 * with the config keys we emit and their Go types, read from each
 * component's `config.go` (and `metadata.yaml` for types and renames).
 *
 * Core: open-telemetry/opentelemetry-collector at 934999fb (after v0.159.0).
 * Contrib: open-telemetry/opentelemetry-collector-contrib, files at the
 * commits given (the index's stored versions, 2026).
 */
import type { OtelcolComponent, UpstreamSource } from "./types.ts";

const CORE = "open-telemetry/opentelemetry-collector";
const CORE_REF = "934999fbab274d10cbf18704b4594a6fb2049887";
const CONTRIB = "open-telemetry/opentelemetry-collector-contrib";

const core = (path: string): UpstreamSource => ({ repo: CORE, path, ref: CORE_REF });
const contrib = (path: string, ref: string): UpstreamSource => ({ repo: CONTRIB, path, ref });

/** configgrpc.ClientConfig / confighttp.ClientConfig headers: configopaque.MapList, which still unmarshals from a map. */
const HEADERS = { map: "string" } as const;

// ---- OTLP exporter client settings (issue 24 part 10) ----
/**
 * configtls.ClientConfig (config/configtls/configtls.go, squashing Config),
 * read at 0027d37b: the keys svc renders.
 */
const CLIENT_TLS_SOURCE: UpstreamSource = { repo: CORE, path: "config/configtls/configtls.go", ref: "0027d37b231696e05678134146afd1582f54f835" };
const CLIENT_TLS = {
  object: { insecure: "bool", insecure_skip_verify: "bool", ca_file: "string", cert_file: "string", key_file: "string", server_name_override: "string" },
} as const;
/**
 * configcompression.TypeWithLevel.UnmarshalText (config/configcompression/compressiontype.go at 0c53ee28) takes
 * gzip, zlib, deflate, snappy, zstd, lz4, none; configgrpc's getGRPCCompressionName only gzip, snappy and zstd
 * (none is not compressed), so svc offers the four both exporters and Alloy take.
 */
const COMPRESSION_SOURCE: UpstreamSource = { repo: CORE, path: "config/configcompression/compressiontype.go", ref: "0c53ee2845bae367b4b6a646f5064e7f16dafd3e" };
const COMPRESSION = { oneOf: ["gzip", "zstd", "snappy", "none"] } as const;
/** configretry.BackOffConfig (config/configretry/backoff.go at 0dfa7863); Validate: max_elapsed_time ≥ initial_interval and max_interval unless 0. */
const RETRY_SOURCE: UpstreamSource = { repo: CORE, path: "config/configretry/backoff.go", ref: "0dfa78636bcb97c9ed5b37fe9829fe32be805911" };
const RETRY_ON_FAILURE = {
  object: { enabled: "bool", initial_interval: "go-duration", max_interval: "go-duration", max_elapsed_time: "go-duration" },
} as const;
/**
 * exporterhelper's queue (exporter/exporterhelper/internal/queuebatch/config.go at 0008bd9f: num_consumers int,
 * queue_size int64, both must be positive), a configoptional whose `enabled` turns it off.
 */
const QUEUE_SOURCE: UpstreamSource = { repo: CORE, path: "exporter/exporterhelper/internal/queuebatch/config.go", ref: "0008bd9fb8b1584a0fbb5107a62d0cc0268aa63c" };
const SENDING_QUEUE = { object: { enabled: "bool", num_consumers: "int", queue_size: "int" } } as const;
const CLIENT_SETTINGS = { tls: CLIENT_TLS, compression: COMPRESSION, retry_on_failure: RETRY_ON_FAILURE, sending_queue: SENDING_QUEUE } as const;
/** Where the client settings' keys were read, for the tests that check every fact names its source. */
export const OTLP_CLIENT_SOURCES: readonly UpstreamSource[] = [CLIENT_TLS_SOURCE, COMPRESSION_SOURCE, RETRY_SOURCE, QUEUE_SOURCE];
// ---- end OTLP exporter client settings ----

// ---- filelog parsing and multiline (issue 24 part 10) ----
/**
 * `operators` (pkg/stanza/adapter/config.go BaseConfig) holding one stanza parser: helper.ParserConfig
 * (helper/parser.go at 1ba49ba8: timestamp, severity), regex_parser's `regex` (parser/regex/config.go at
 * 2d585794), helper.TimeParser (helper/time.go at 00e6dd7c: parse_from, layout_type strptime|gotime|epoch,
 * layout) and helper.SeverityConfig (helper/severity_builder.go at 00e6dd7c: parse_from). `multiline` is
 * split.Config (split/split.go at 2bcbb372), squashed into the filelog config under that key.
 */
const FILELOG_OPERATORS = {
  list: {
    object: {
      type: { oneOf: ["json_parser", "regex_parser"] },
      regex: "string",
      timestamp: { object: { parse_from: "string", layout_type: { oneOf: ["strptime", "gotime", "epoch"] }, layout: "string" } },
      severity: { object: { parse_from: "string" } },
    },
  },
} as const;
const FILELOG_MULTILINE = { object: { line_start_pattern: "string", line_end_pattern: "string" } } as const;
export const FILELOG_PARSE_SOURCES: readonly UpstreamSource[] = [
  contrib("pkg/stanza/adapter/config.go", "1a1a3e1ac6855509b18279fba6843f12af9195a0"),
  contrib("pkg/stanza/operator/helper/parser.go", "1ba49ba839c739d6bf0a264a26c7b2a959ffd71c"),
  contrib("pkg/stanza/operator/parser/regex/config.go", "2d58579477a62b2d4d08ca5640ae74a192c51e41"),
  contrib("pkg/stanza/operator/helper/time.go", "00e6dd7ca2b3ebbb581bb495a5a89c3f72dbdb01"),
  contrib("pkg/stanza/operator/helper/severity_builder.go", "00e6dd7ca2b3ebbb581bb495a5a89c3f72dbdb01"),
  contrib("pkg/stanza/split/split.go", "2bcbb372ccc02c45de2b8d2aa43ebb3be9774f9a"),
];
// ---- end filelog parsing and multiline ----

const otlpGrpcExporter: OtelcolComponent = {
  kind: "exporter",
  source: core("exporter/otlpexporter/config.go"),
  config: { endpoint: "string", headers: HEADERS, ...CLIENT_SETTINGS },
  renamed: {
    deprecated: "otlp",
    since: "0.144.0",
    // metadata.yaml: `type: otlp_grpc`, `deprecated_type: otlp`; CHANGELOG v0.144.0 (#14403).
    source: { repo: CORE, path: "exporter/otlpexporter/metadata.yaml", ref: "v0.144.0" },
  },
};

const otlpHttpExporter: OtelcolComponent = {
  kind: "exporter",
  source: core("exporter/otlphttpexporter/config.go"),
  config: { endpoint: "string", headers: HEADERS, ...CLIENT_SETTINGS },
  renamed: {
    deprecated: "otlphttp",
    since: "0.144.0",
    // metadata.yaml: `type: otlp_http`, `deprecated_type: otlphttp`; CHANGELOG v0.144.0 (#14396).
    source: { repo: CORE, path: "exporter/otlphttpexporter/metadata.yaml", ref: "v0.144.0" },
  },
};

const conditions = { list: "string" } as const;
/** ottl.ErrorMode (pkg/ottl/config.go). */
const ERROR_MODE = { oneOf: ["ignore", "silent", "propagate"] } as const;
/** condition.ContextID.UnmarshalText (processor/filterprocessor/internal/condition/config.go). */
const CONTEXT = { oneOf: ["resource", "scope", "span", "spanevent", "metric", "datapoint", "log", "profile"] } as const;
const contextConditions = { list: { object: { context: CONTEXT, conditions } } } as const;
const FILTER_CONFIG = contrib("processor/filterprocessor/config.go", "038321994114ea01dd48bdefa38a836387038b1f");

/** common.ContextID.UnmarshalText, processor/transformprocessor/internal/common/config.go @ba96fac1. */
const TRANSFORM_CONTEXT = { oneOf: ["resource", "scope", "span", "spanevent", "metric", "datapoint", "log"] } as const;
const TRANSFORM_STATEMENTS = { list: { object: { context: TRANSFORM_CONTEXT, statements: { list: "string" } } } } as const;

/** attraction.Action (internal/coreinternal/attraction/attraction.go). */
const ACTION = { oneOf: ["insert", "update", "upsert", "delete", "hash", "extract", "convert"] } as const;
const attributeActions = { list: { object: { key: "string", action: ACTION, value: "scalar" } } } as const;

/**
 * Kafka and Kubernetes receivers (issue 24, catalog growth), contrib files at
 * the commits given. Stability from each metadata.yaml: kafka beta for logs,
 * metrics and traces (a06eecf1); k8s_cluster beta for metrics (7f80b7b6);
 * kubeletstats beta for metrics (52a2d83a); k8sobjects alpha for logs at
 * 59506098, the revision the index holds.
 */
const KAFKA_CONFIG = contrib("receiver/kafkareceiver/config.go", "00168f3c6fa1c9b0440ac86aee112d1e27771cf6");
/** TopicEncodingConfig: `topic` deprecated in v0.142.0 for the list `topics`. */
const kafkaSignal = { object: { topic: "string", topics: { list: "string" }, encoding: "string" } } as const;
/** k8sconfig.APIConfig auth_type (internal/k8sconfig/config.go at f17fbd00). */
const K8S_AUTH_TYPE = { oneOf: ["none", "serviceAccount", "kubeConfig", "tls"] } as const;

const SOURCE_RECEIVERS_KAFKA_K8S: Readonly<Record<string, OtelcolComponent>> = {
  kafka: {
    kind: "receiver",
    source: KAFKA_CONFIG,
    config: {
      // configkafka.ClientConfig and ConsumerConfig (pkg/kafka/configkafka/config.go at 06a7fdba), squashed.
      brokers: { list: "string" },
      protocol_version: "string",
      client_id: "string",
      group_id: "string",
      // ConsumerConfig.Validate.
      initial_offset: { oneOf: ["latest", "earliest"] },
      logs: kafkaSignal,
      metrics: kafkaSignal,
      traces: kafkaSignal,
      // ClientConfig.TLS, a *configtls.ClientConfig (present: TLS on).
      tls: { object: { insecure_skip_verify: "bool", ca_file: "string" } },
      // AuthenticationConfig.SASL; SASLConfig.Validate takes these mechanisms with a username and password.
      auth: {
        object: {
          sasl: {
            object: {
              mechanism: { oneOf: ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "AWS_MSK_IAM_OAUTHBEARER", "OIDCFILE"] },
              username: "string",
              password: "string",
            },
          },
        },
      },
    },
    minimumVersion: {
      // logs/metrics/traces TopicEncodingConfig: PR #38985 (merged 2025-03-26), released in v0.124.0, which
      // deprecated the top-level topic and encoding (removed by PR #44568).
      since: "0.124.0",
      source: KAFKA_CONFIG,
    },
    keyChange: {
      deprecated: ["logs.topic", "metrics.topic", "traces.topic"],
      replacements: ["logs.topics", "metrics.topics", "traces.topics"],
      // config.go: `Deprecated [v0.142.0]: Use Topics` (PR #44575).
      since: "0.142.0",
      source: KAFKA_CONFIG,
      // otelcol validate at v0.149.0: "'logs' has invalid keys: topic".
      refusedBy: "0.149.0",
    },
  },
  k8s_cluster: {
    kind: "receiver",
    source: contrib("receiver/k8sclusterreceiver/config.go", "b548215aa950653aa28636dffb7d0b7e87f104e1"),
    config: {
      auth_type: K8S_AUTH_TYPE,
      collection_interval: "go-duration",
      node_conditions_to_report: { list: "string" },
      allocatable_types_to_report: { list: "string" },
      // Config.Validate.
      distribution: { oneOf: ["kubernetes", "openshift"] },
    },
  },
  kubeletstats: {
    kind: "receiver",
    source: contrib("receiver/kubeletstatsreceiver/config.go", "e9872306491762f624c1db225112f2f51892a0a5"),
    config: {
      // scraperhelper.ControllerConfig; kubelet.ClientConfig (internal/kubelet/client_config.go at f17fbd00) squashes
      // k8sconfig.APIConfig and adds insecure_skip_verify; confignet.TCPAddrConfig gives endpoint.
      collection_interval: "go-duration",
      auth_type: K8S_AUTH_TYPE,
      endpoint: "string",
      insecure_skip_verify: "bool",
      // kubelet.ValidMetricGroups.
      metric_groups: { list: { oneOf: ["container", "pod", "node", "volume"] } },
      node: "string",
    },
  },
  k8sobjects: {
    kind: "receiver",
    source: contrib("receiver/k8sobjectsreceiver/config.go", "f85f10de482f57ce9dbeeb376ae2b00b9417eed2"),
    config: {
      auth_type: K8S_AUTH_TYPE,
      // Config.Validate: error_mode and each object's mode.
      error_mode: { oneOf: ["propagate", "ignore", "silent"] },
      objects: {
        list: {
          object: {
            name: "string",
            group: "string",
            namespaces: { list: "string" },
            mode: { oneOf: ["pull", "watch"] },
            field_selector: "string",
            label_selector: "string",
          },
        },
      },
    },
  },
};

export const OTELCOL_COMPONENTS: Readonly<Record<string, OtelcolComponent>> = {
  // receivers
  otlp: {
    kind: "receiver",
    source: core("receiver/otlpreceiver/config.go"),
    config: { protocols: { object: { grpc: { object: { endpoint: "string" } }, http: { object: { endpoint: "string" } } } } },
  },
  filelog: {
    kind: "receiver",
    source: contrib("pkg/stanza/fileconsumer/config.go", "bb12e47671a7a0809f95060dd0716d7e40641ff2"),
    config: {
      include: { list: "string" },
      exclude: { list: "string" },
      start_at: { oneOf: ["beginning", "end"] },
      operators: FILELOG_OPERATORS,
      multiline: FILELOG_MULTILINE,
    },
  },
  journald: {
    kind: "receiver",
    source: contrib("pkg/stanza/operator/input/journald/config.go", "7764cbb97d3d165d663e3615f52f007fe4a91c81"),
    config: { directory: "string", units: { list: "string" } },
  },
  hostmetrics: {
    kind: "receiver",
    source: contrib("receiver/hostmetricsreceiver/config.go", "0eb23104cee99e8f06c865d2cd0784820a84bfa4"),
    // Each scraper is a key whose (empty) map takes that scraper's defaults.
    config: { collection_interval: "go-duration", scrapers: { map: { object: {} } } },
  },
  syslog: {
    kind: "receiver",
    source: contrib("pkg/stanza/operator/input/syslog/config.go", "0e0721722aeaf5b0701f1f95770fc872447bdf38"),
    // The syslog parser's protocol (pkg/stanza/operator/parser/syslog/config.go).
    config: { protocol: { oneOf: ["rfc3164", "rfc5424"] }, tcp: { object: { listen_address: "string" } }, udp: { object: { listen_address: "string" } } },
  },
  prometheus: {
    kind: "receiver",
    // `config` is Prometheus' own config.Config; its durations are model.Duration.
    source: contrib("receiver/prometheusreceiver/config.go", "44b9d264a97caee6c3f25f686e7200ffacc3902b"),
    config: {
      config: {
        object: {
          scrape_configs: {
            list: {
              object: {
                job_name: "string",
                scrape_interval: "prometheus-duration",
                scrape_timeout: "prometheus-duration",
                static_configs: { list: { object: { targets: { list: "string" } } } },
              },
            },
          },
        },
      },
    },
  },
  ...SOURCE_RECEIVERS_KAFKA_K8S,
  // processors
  batch: {
    kind: "processor",
    source: core("processor/batchprocessor/config.go"),
    config: { send_batch_size: "uint32", timeout: "go-duration" },
  },
  filter: {
    kind: "processor",
    source: FILTER_CONFIG,
    config: {
      error_mode: ERROR_MODE,
      logs: { object: { log_record: conditions } },
      metrics: { object: { metric: conditions, datapoint: conditions } },
      traces: { object: { span: conditions, spanevent: conditions } },
      log_conditions: contextConditions,
      metric_conditions: contextConditions,
      trace_conditions: contextConditions,
    },
    keyChange: {
      deprecated: ["logs", "metrics", "traces"],
      replacements: ["log_conditions", "metric_conditions", "trace_conditions"],
      // Added in contrib v0.146.0 (PR #44543, "[processor/filter] Introduce inferred-context"; the
      // opentelemetry.io blog "OTTL context inference comes to the Filter Processor", 2026-02-17);
      // config.go marks the old groups `Deprecated: use …Conditions instead` (so by v0.156.0).
      since: "0.146.0",
      source: FILTER_CONFIG,
    },
  },
  attributes: {
    kind: "processor",
    source: contrib("processor/attributesprocessor/config.go", "2de7cd28c751af27b9a8140055169f4851f1ceaa"),
    config: { actions: attributeActions },
  },
  resource: {
    kind: "processor",
    source: contrib("processor/resourceprocessor/config.go", "1ca0305c83b4aef4193c6322f8b60b2a4a9135b0"),
    config: { attributes: attributeActions },
  },
  // The transform processor (its own block: other entries land beside it).
  // Config{ErrorMode, TraceStatements, MetricStatements, LogStatements []common.ContextStatements, FlattenData}
  // in config.go; ContextStatements{Context ContextID, Statements []string} and ContextID.UnmarshalText
  // in internal/common/config.go. Config.Unmarshal also takes a flat list of strings per key (the
  // context then inferred); the catalog renders the structured form, which every version takes.
  // Newer common/config.go adds per-group `conditions` and `error_mode`, which we do not emit.
  transform: {
    kind: "processor",
    source: contrib("processor/transformprocessor/config.go", "a06eecf1ed29fe263a0de977886bdd0a062bb16a"),
    config: {
      error_mode: ERROR_MODE,
      log_statements: TRANSFORM_STATEMENTS,
      metric_statements: TRANSFORM_STATEMENTS,
      trace_statements: TRANSFORM_STATEMENTS,
    },
  },
  // exporters
  otlp_grpc: otlpGrpcExporter,
  otlp_http: otlpHttpExporter,
  debug: {
    kind: "exporter",
    source: core("exporter/debugexporter/config.go"),
    // configtelemetry.Level as the debug exporter takes it.
    config: { verbosity: { oneOf: ["basic", "normal", "detailed"] } },
  },
  prometheusremotewrite: {
    kind: "exporter",
    source: contrib("exporter/prometheusremotewriteexporter/config.go", "647b4c1fceb43ee8d938aaca6e179a1ac61f29ed"),
    config: { endpoint: "string", headers: HEADERS },
  },
  nop: { kind: "exporter", source: core("exporter/nopexporter/nop_exporter.go"), config: {} },
};

/** The nop receiver shares its type with the nop exporter but is a receiver. */
export const OTELCOL_NOP_RECEIVER: OtelcolComponent = { kind: "receiver", source: core("receiver/nopreceiver/nop_receiver.go"), config: {} };

/** The table entry for a rendered `kind` of `type`, deprecated aliases included. */
export function otelcolComponent(kind: OtelcolComponent["kind"], type: string): OtelcolComponent | undefined {
  if (kind === "receiver" && type === "nop") return OTELCOL_NOP_RECEIVER;
  const direct = OTELCOL_COMPONENTS[type];
  if (direct?.kind === kind) return direct;
  return Object.values(OTELCOL_COMPONENTS).find((c) => c.kind === kind && c.renamed?.deprecated === type);
}
