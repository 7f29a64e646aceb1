/**
 * Upstream facts more than one catalog type rests on: where each repository
 * is read, value types several components share, and the components that
 * shared renderers emit (the Loki chain, the Prometheus scrape, the idle
 * config's nop). A component one type alone renders is recorded in that
 * type's folder (`<kind>/<type>/upstream.ts`); tables.ts gathers both.
 *
 * Runtime O: the collector component's `config.go` (and `metadata.yaml` for
 * types and renames). Core: open-telemetry/opentelemetry-collector at
 * 934999fb (after v0.159.0). Contrib: open-telemetry/opentelemetry-collector-contrib,
 * files at the commits given (the index's stored versions, 2026).
 *
 * Runtime R: the `alloy:"…"` tags of each Alloy component's Arguments struct,
 * and the stability level it registers with (`Stability: featuregate.…`
 * beside `Name:`, also the `stage:` of its docs/sources/reference/components
 * page). Alloy runs at generally-available unless started with
 * `--stability.level`, and its remotecfg controller inherits that level, so
 * one component of a lower level makes the whole remote config fail to load.
 * grafana/alloy at 66ebea85 (2026-08-21, after v1.19.0-rc.3).
 */
import type { AlloyBody, AlloyComponent, AlloyMember, TypeUpstream, UpstreamSource, ValueType } from "./types.ts";

export const CORE = "open-telemetry/opentelemetry-collector";
const CORE_REF = "934999fbab274d10cbf18704b4594a6fb2049887";
const CONTRIB = "open-telemetry/opentelemetry-collector-contrib";
const ALLOY = "grafana/alloy";
const ALLOY_REF = "66ebea856dffb242f921775e9552a133f60dc5c1";

/** A collector-core file at the core commit above. */
export const core = (path: string): UpstreamSource => ({ repo: CORE, path, ref: CORE_REF });
/** A collector-contrib file at the commit `ref`. */
export const contrib = (path: string, ref: string): UpstreamSource => ({ repo: CONTRIB, path, ref });
/** An Alloy file at the Alloy commit above. */
export const alloyAt = (path: string): UpstreamSource => ({ repo: ALLOY, path, ref: ALLOY_REF });

/** The stability level Alloy loads components at unless told otherwise. */
export const ALLOY_DEFAULT_STABILITY = "generally-available";

// ---- Alloy bodies ----
export const attr = (value: ValueType): AlloyMember => ({ attr: value });
export const block = (body: AlloyBody): AlloyMember => ({ block: body });
export const blocks = (body: AlloyBody): AlloyMember => ({ block: body, repeatable: true });

/** `output { logs = […] metrics = […] traces = […] }` (otelcol.ConsumerArguments, internal/component/otelcol/consumer.go). */
export const OUTPUT: AlloyMember = block({ logs: attr({ list: "capsule" }), metrics: attr({ list: "capsule" }), traces: attr({ list: "capsule" }) });
export const STRINGS = { list: "string" } as const;
export const TARGETS = { list: { map: "string" } } as const;
export const RECEIVERS = { list: "capsule" } as const;

// ---- value types several components share ----
/** ottl.ErrorMode (pkg/ottl/config.go), which Alloy's otelcol processors take as is. */
export const ERROR_MODE = { oneOf: ["ignore", "silent", "propagate"] } as const;
/** configgrpc.ClientConfig / confighttp.ClientConfig headers: configopaque.MapList, which still unmarshals from a map. */
export const HEADERS = { map: "string" } as const;
/** k8sconfig.APIConfig auth_type (internal/k8sconfig/config.go at f17fbd00). */
export const K8S_AUTH_TYPE = { oneOf: ["none", "serviceAccount", "kubeConfig", "tls"] } as const;
/** attraction.Action (internal/coreinternal/attraction/attraction.go); Alloy's otelcol.AttrActionKeyValue.Action is the same. */
export const ACTION = { oneOf: ["insert", "update", "upsert", "delete", "hash", "extract", "convert"] } as const;

// ---- OTLP exporter client settings (issue 24 part 10), for the otlp and otlphttp exporters ----
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
const QUEUE_SOURCE: UpstreamSource = {
  repo: CORE,
  path: "exporter/exporterhelper/internal/queuebatch/config.go",
  ref: "0008bd9fb8b1584a0fbb5107a62d0cc0268aa63c",
};
const SENDING_QUEUE = { object: { enabled: "bool", num_consumers: "int", queue_size: "int" } } as const;
/** The client settings' collector keys (otlp-client.ts). */
export const CLIENT_SETTINGS = { tls: CLIENT_TLS, compression: COMPRESSION, retry_on_failure: RETRY_ON_FAILURE, sending_queue: SENDING_QUEUE } as const;

/**
 * The same settings in Alloy. otelcol.TLSClientArguments with TLSSetting squashed
 * (internal/component/otelcol/config_tls.go): note `server_name`, which the collector calls server_name_override.
 */
const ALLOY_CLIENT_TLS: AlloyMember = block({
  insecure: attr("bool"),
  insecure_skip_verify: attr("bool"),
  ca_file: attr("string"),
  cert_file: attr("string"),
  key_file: attr("string"),
  server_name: attr("string"),
});
/** otelcol.CompressionType.UnmarshalText (config_compression.go): gzip, zlib, deflate, snappy, zstd, none; svc renders four. */
const ALLOY_COMPRESSION = attr(COMPRESSION);
/** otelcol.RetryArguments (config_retry.go); SetToDefault 5s / 30s / 5m, multiplier 1.5 (Validate wants > 1). */
const ALLOY_RETRY_ON_FAILURE: AlloyMember = block({
  enabled: attr("bool"),
  initial_interval: attr("go-duration"),
  max_interval: attr("go-duration"),
  max_elapsed_time: attr("go-duration"),
});
/** otelcol.QueueArguments (config_queue.go): num_consumers int, queue_size int64 (Validate: > 0 when enabled). */
const ALLOY_SENDING_QUEUE: AlloyMember = block({ enabled: attr("bool"), num_consumers: attr("int"), queue_size: attr("int") });
/** An otelcol exporter's arguments: its `client` block (GRPCClientArguments or HTTPClientArguments) and the client settings. */
export const ALLOY_EXPORTER_ARGUMENTS: AlloyBody = {
  client: block({ endpoint: attr("string"), headers: attr({ map: "string" }), compression: ALLOY_COMPRESSION, tls: ALLOY_CLIENT_TLS }),
  retry_on_failure: ALLOY_RETRY_ON_FAILURE,
  sending_queue: ALLOY_SENDING_QUEUE,
};
// ---- end OTLP exporter client settings ----

/** prometheus.scrape, which sources/scrape.ts renders for the prometheus and hostmetrics sources. */
export const PROMETHEUS_SCRAPE: AlloyComponent = {
  name: "prometheus.scrape",
  stability: "generally-available",
  source: alloyAt("internal/component/prometheus/scrape/scrape.go"),
  arguments: {
    targets: attr(TARGETS),
    forward_to: attr(RECEIVERS),
    job_name: attr("string"),
    scrape_interval: attr("go-duration"),
    scrape_timeout: attr("go-duration"),
  },
  // SetToDefault: ScrapeInterval 1m, ScrapeTimeout 10s (Prometheus' DefaultGlobalConfig).
  defaults: { scrape_interval: "1m", scrape_timeout: "10s" },
  // Arguments.Validate: "scrape_timeout (…) greater than scrape_interval (…)".
  rules: [{ rule: "not-greater", left: "scrape_timeout", right: "scrape_interval", source: alloyAt("internal/component/prometheus/scrape/scrape.go") }],
};

export const SHARED_UPSTREAM: TypeUpstream = {
  otelcol: [
    // The idle config (render/otelcol.ts): the nop receiver shares its type with the nop exporter.
    { type: "nop", kind: "exporter", source: core("exporter/nopexporter/nop_exporter.go"), config: {} },
    { type: "nop", kind: "receiver", source: core("receiver/nopreceiver/nop_receiver.go"), config: {} },
  ],
  alloy: [
    // The end of the Loki chain (sources/loki-chain.ts) and of the Kubernetes events source.
    {
      name: "otelcol.receiver.loki",
      stability: "generally-available",
      source: alloyAt("internal/component/otelcol/receiver/loki/loki.go"),
      arguments: { output: OUTPUT },
    },
    {
      name: "loki.relabel",
      stability: "generally-available",
      source: alloyAt("internal/component/loki/relabel/relabel.go"),
      arguments: {
        forward_to: attr(RECEIVERS),
        // alloy_relabel.Config, internal/component/common/relabel/relabel.go; its Validate() wants a replace
        // rule's target_label to be a Prometheus label name, which the constant names in
        // sources/log-records.ts (SYSLOG_LABELS) are.
        rule: blocks({ source_labels: attr(STRINGS), regex: attr("string"), action: attr("string"), target_label: attr("string") }),
      },
    },
    // The end of a Prometheus scrape (sources/scrape.ts).
    PROMETHEUS_SCRAPE,
    {
      name: "otelcol.receiver.prometheus",
      stability: "generally-available",
      source: alloyAt("internal/component/otelcol/receiver/prometheus/prometheus.go"),
      arguments: { output: OUTPUT },
    },
  ],
  also: [CLIENT_TLS_SOURCE, COMPRESSION_SOURCE, RETRY_SOURCE, QUEUE_SOURCE],
};
