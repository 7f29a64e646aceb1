/**
 * The kafka source's upstream facts (upstream/types.ts; issue 24, catalog
 * growth): the collector's kafka receiver (beta for logs, metrics and traces
 * in metadata.yaml at a06eecf1) and Alloy's otelcol.receiver.kafka.
 */
import { alloyAt, attr, block, contrib, OUTPUT, STRINGS } from "../../upstream/shared.ts";
import type { OtelcolComponent, TypeUpstream } from "../../upstream/types.ts";
import type { Upstream } from "../delivery.ts";

const CONFIG = contrib("receiver/kafkareceiver/config.go", "00168f3c6fa1c9b0440ac86aee112d1e27771cf6");
/** TopicEncodingConfig: `topic` deprecated in v0.142.0 for the list `topics`. */
const SIGNAL = { object: { topic: "string", topics: { list: "string" }, encoding: "string" } } as const;

/** The receiver, whose key change kafka.ts renders by version. */
export const KAFKA_RECEIVER: OtelcolComponent = {
  type: "kafka",
  kind: "receiver",
  source: CONFIG,
  config: {
    // configkafka.ClientConfig and ConsumerConfig (pkg/kafka/configkafka/config.go at 06a7fdba), squashed.
    brokers: { list: "string" },
    protocol_version: "string",
    client_id: "string",
    group_id: "string",
    // ConsumerConfig.Validate.
    initial_offset: { oneOf: ["latest", "earliest"] },
    logs: SIGNAL,
    metrics: SIGNAL,
    traces: SIGNAL,
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
    source: CONFIG,
  },
  keyChange: {
    deprecated: ["logs.topic", "metrics.topic", "traces.topic"],
    replacements: ["logs.topics", "metrics.topics", "traces.topics"],
    // config.go: `Deprecated [v0.142.0]: Use Topics` (PR #44575).
    since: "0.142.0",
    source: CONFIG,
    // otelcol validate at v0.149.0: "'logs' has invalid keys: topic".
    refusedBy: "0.149.0",
  },
};

export const UPSTREAM: TypeUpstream = {
  otelcol: [KAFKA_RECEIVER],
  alloy: [
    {
      name: "otelcol.receiver.kafka",
      stability: "generally-available",
      source: alloyAt("internal/component/otelcol/receiver/kafka/kafka.go"),
      arguments: {
        brokers: attr(STRINGS),
        // `alloy:"protocol_version,attr"` without optional: required.
        protocol_version: attr("string"),
        client_id: attr("string"),
        group_id: attr("string"),
        initial_offset: attr({ oneOf: ["latest", "earliest"] }),
        // KafkaReceiverTopicEncodingConfig: `topic` since v1.9.0 (075cd0c0), deprecated for `topics` in v1.13.0 (f1f457fa).
        logs: block({ topic: attr("string"), topics: attr(STRINGS), encoding: attr("string") }),
        metrics: block({ topic: attr("string"), topics: attr(STRINGS), encoding: attr("string") }),
        traces: block({ topic: attr("string"), topics: attr(STRINGS), encoding: attr("string") }),
        // otelcol.TLSClientArguments (config_tls.go).
        tls: block({ insecure_skip_verify: attr("bool"), ca_file: attr("string") }),
        // otelcol.KafkaAuthenticationArguments, KafkaSASLArguments (config_kafka.go); password is an alloytypes.Secret, which takes a string.
        authentication: block({ sasl: block({ mechanism: attr("string"), username: attr("string"), password: attr("string") }) }),
        output: OUTPUT,
      },
    },
  ],
};

/** Where the parity table's facts about what each runtime delivers were read (delivery.ts). */
export const DELIVERY_UPSTREAM: readonly Upstream[] = [
  {
    repo: "grafana/alloy",
    path: "internal/component/otelcol/receiver/kafka/kafka.go",
    version: "v1.18.1",
    fact: "otelcol.receiver.kafka wraps contrib's kafkareceiver: the same unmarshalers per encoding, so the same records.",
  },
];
