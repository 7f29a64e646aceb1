/** Kafka source configs the conformance test renders (folder.ts). */
import { SECRET } from "../../corpus-values.ts";
import type { CorpusConfig } from "../../folder.ts";

export const CORPUS: readonly CorpusConfig[] = [
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
    sasl: { mechanism: "PLAIN", username: "u", password: SECRET },
  },
  { brokers: ["kafka:9092"], tls: { enabled: true }, sasl: { username: "u", password: { env: "KAFKA_PASSWORD" } } },
];
