/**
 * Kafka: consumes OTLP (or another encoding) from Kafka topics. Both
 * runtimes run the same upstream receiver (contrib receiver/kafkareceiver;
 * Alloy's generally available `otelcol.receiver.kafka` wraps it), so records
 * reach the pipeline alike. Each signal reads its own topic with its own
 * encoding, as upstream configures it per signal (`logs`, `metrics`,
 * `traces`): one source feeds several pipelines without two signals reading
 * one topic.
 *
 * Runtime O takes the per-signal blocks from v0.124.0 (its upstream.ts);
 * `topic` is written while the collector is known to run a version before
 * v0.142.0, which takes the list `topics` and deprecates `topic`; an unknown
 * version gets `topics`, since v0.149.0 refuses `topic`. Alloy has no version
 * targeting: it gets `topic`, which it takes in the per-signal blocks since
 * v1.9.0 (075cd0c0) and still accepts, deprecated, since v1.13.0 added
 * `topics` (f1f457fa).
 */
import { Type, type Static } from "@sinclair/typebox";
import { Sensitive } from "../../../../shared/sensitive.ts";
import type { ErrorDetail } from "../../../errors.ts";
import { re2Problem } from "../../../ottl/regex.ts";
import { attr, block } from "../../alloy-syntax.ts";
import { Closed, StringEnum } from "../../schemas.ts";
import { defineSource, type OtelcolTarget } from "../../types.ts";
import { UNKNOWN_TARGET, usesNewKeys } from "../../versions.ts";
import { DELIVERY_UPSTREAM, KAFKA_RECEIVER } from "./upstream.ts";

/**
 * The built-in encodings each signal's unmarshaler takes, on both runtimes
 * (receiver/kafkareceiver/encoding.go; Alloy's otelcol.receiver.kafka docs,
 * "Supported encodings"). An encoding extension is not offered: svc renders
 * no extensions.
 */
export const KAFKA_ENCODINGS = {
  logs: ["otlp_proto", "otlp_json", "raw", "text", "json", "azure_resource_logs"],
  metrics: ["otlp_proto", "otlp_json"],
  traces: ["otlp_proto", "otlp_json", "jaeger_proto", "jaeger_json", "zipkin_proto", "zipkin_json", "zipkin_thrift"],
} as const;

/** Upstream's default topic per signal (TopicEncodingConfig.Topics). */
const DEFAULT_TOPICS = { logs: "otlp_logs", metrics: "otlp_metrics", traces: "otlp_spans" } as const;

type KafkaSignal = keyof typeof KAFKA_ENCODINGS;
const KAFKA_SIGNALS = Object.keys(KAFKA_ENCODINGS) as KafkaSignal[];

/** A Kafka topic name (letters, digits, `.`, `_`, `-`, at most 249), or a regular expression starting with `^`. */
const TOPIC = "^(?:\\^\\S+|[A-Za-z0-9._-]{1,249})$";

function signalTopic<const E extends readonly string[]>(signal: KafkaSignal, encodings: E) {
  return Closed(
    {
      topic: Type.String({
        pattern: TOPIC,
        errorMessage: "must be a Kafka topic name (letters, digits, . _ -) or a regular expression starting with ^",
        default: DEFAULT_TOPICS[signal],
        description: `Topic to read ${signal} from; one starting with ^ is a regular expression matching topics.`,
      }),
      encoding: StringEnum(encodings, { default: "otlp_proto", description: `How the ${signal} messages are encoded.` }),
    },
    { default: {}, title: signal[0]!.toUpperCase() + signal.slice(1) },
  );
}

/**
 * sarama.ParseKafkaVersion, which both runtimes' configkafka calls in
 * Validate: `x.y.z`, or `0.x.y.z` for releases before 1.0.
 */
const PROTOCOL_VERSION = "^(?:0\\.[0-9]+\\.[0-9]+\\.[0-9]+|[1-9][0-9]*\\.[0-9]+\\.[0-9]+)$";

const schema = Closed({
  brokers: Type.Array(Type.String({ pattern: "^\\S+:[0-9]{1,5}$", errorMessage: "must be host:port, e.g. kafka-1:9092" }), {
    minItems: 1,
    uniqueItems: true,
    description: "Bootstrap brokers, host:port.",
  }),
  protocol_version: Type.String({
    pattern: PROTOCOL_VERSION,
    errorMessage: "must be a Kafka version such as 2.1.0 (or 0.10.2.0 before 1.0)",
    default: "2.1.0",
    description: "Kafka protocol version the client assumes the brokers speak (Alloy requires it).",
  }),
  group_id: Type.String({ minLength: 1, pattern: "^\\S+$", default: "otel-collector", description: "Consumer group id." }),
  client_id: Type.String({ minLength: 1, pattern: "^\\S+$", default: "otel-collector", description: "Client id advertised to Kafka (ACLs, quotas)." }),
  initial_offset: StringEnum(["latest", "earliest"], {
    default: "latest",
    description: "Where a consumer group without a committed offset starts.",
  }),
  logs: signalTopic("logs", KAFKA_ENCODINGS.logs),
  metrics: signalTopic("metrics", KAFKA_ENCODINGS.metrics),
  traces: signalTopic("traces", KAFKA_ENCODINGS.traces),
  tls: Closed(
    {
      enabled: Type.Boolean({ default: false, description: "Connect to the brokers over TLS." }),
      insecure_skip_verify: Type.Boolean({ default: false, description: "Do not verify the brokers' certificates." }),
      ca_file: Type.Optional(
        Type.String({
          pattern: "^/",
          errorMessage: "must be an absolute path",
          description: "CA certificate file on the collector host; unset uses the system roots.",
        }),
      ),
    },
    { default: {}, title: "TLS" },
  ),
  sasl: Type.Optional(
    Closed(
      {
        mechanism: StringEnum(["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"], { default: "SCRAM-SHA-512", description: "SASL mechanism." }),
        username: Type.String({ minLength: 1, description: "SASL user name." }),
        password: Sensitive(Type.String({ minLength: 1, description: "SASL password; kept in the vault." })),
      },
      { title: "SASL authentication" },
    ),
  ),
});

type KafkaConfig = Static<typeof schema>;

function tlsSettings(tls: KafkaConfig["tls"]): Record<string, unknown> {
  return {
    ...(tls.insecure_skip_verify ? { insecure_skip_verify: true } : {}),
    ...(tls.ca_file !== undefined ? { ca_file: tls.ca_file } : {}),
  };
}

export const kafkaSource = defineSource({
  kind: "source",
  type: "kafka",
  title: "Kafka",
  description: "Consumes logs, metrics and traces from Kafka topics, one topic and encoding per signal.",
  signals: ["logs", "metrics", "traces"],
  delivery: {
    otelcol: "the records each topic holds, decoded by the kafka receiver's unmarshaler for its encoding",
    alloy: "the same: otelcol.receiver.kafka wraps the collector's kafka receiver",
    normalised: null,
    difference: null,
    differsAs: null,
    upstream: DELIVERY_UPSTREAM,
  },
  schema,
  check(config, root) {
    const problems: ErrorDetail[] = [];
    if (!config.tls.enabled && (config.tls.insecure_skip_verify || config.tls.ca_file !== undefined)) {
      problems.push({ path: `${root}.tls.enabled`, message: "must be true when insecure_skip_verify or ca_file is set" });
    }
    for (const [i, broker] of config.brokers.entries()) {
      const port = Number(broker.slice(broker.lastIndexOf(":") + 1));
      if (port < 1 || port > 65535) problems.push({ path: `${root}.brokers[${i}]`, message: `has port ${port}; a port is 1 to 65535` });
    }
    const seen = new Map<string, KafkaSignal>();
    for (const signal of KAFKA_SIGNALS) {
      const { topic } = config[signal];
      // A ^ topic is a regex the client compiles (Go regexp) when the receiver starts.
      const bad = topic.startsWith("^") ? re2Problem(topic) : undefined;
      if (bad !== undefined) problems.push({ path: `${root}.${signal}.topic`, message: bad });
      const other = seen.get(topic);
      if (other !== undefined) problems.push({ path: `${root}.${signal}.topic`, message: `is also the ${other} topic; each signal reads its own topic` });
      else seen.set(topic, signal);
    }
    return problems;
  },
  otelcol(config, target: OtelcolTarget = UNKNOWN_TARGET) {
    const topics = usesNewKeys(KAFKA_RECEIVER, target);
    const signals = Object.fromEntries(
      KAFKA_SIGNALS.map((s) => [s, { ...(topics ? { topics: [config[s].topic] } : { topic: config[s].topic }), encoding: config[s].encoding }]),
    );
    return {
      type: "kafka",
      config: {
        brokers: config.brokers,
        protocol_version: config.protocol_version,
        client_id: config.client_id,
        group_id: config.group_id,
        initial_offset: config.initial_offset,
        ...signals,
        ...(config.tls.enabled ? { tls: tlsSettings(config.tls) } : {}),
        ...(config.sasl !== undefined
          ? { auth: { sasl: { mechanism: config.sasl.mechanism, username: config.sasl.username, password: config.sasl.password } } }
          : {}),
      },
    };
  },
  alloy(config, label, output) {
    const tls = tlsSettings(config.tls);
    return [
      block("otelcol.receiver.kafka", label, [
        attr("brokers", config.brokers),
        attr("protocol_version", config.protocol_version),
        attr("client_id", config.client_id),
        attr("group_id", config.group_id),
        attr("initial_offset", config.initial_offset),
        ...KAFKA_SIGNALS.map((s) => block(s, undefined, [attr("topic", config[s].topic), attr("encoding", config[s].encoding)])),
        config.tls.enabled &&
          block(
            "tls",
            undefined,
            Object.entries(tls).map(([k, v]) => attr(k, v as string | boolean)),
          ),
        config.sasl !== undefined &&
          block("authentication", undefined, [
            block("sasl", undefined, [
              attr("mechanism", config.sasl.mechanism),
              attr("username", config.sasl.username),
              attr("password", config.sasl.password),
            ]),
          ]),
        output,
      ]),
    ];
  },
});
