/** OTLP (gRPC) destination configs the conformance test renders (folder.ts). */
import { FROM_HOST, plain, SECRET } from "../../corpus-values.ts";
import type { CorpusConfig } from "../../folder.ts";

/** Every OTLP client setting (otlp-client.ts), which the otlphttp corpus sets too. */
export const CLIENT_SETTINGS = {
  tls: {
    insecure_skip_verify: true,
    ca_file: "/opt/certs/ca.crt",
    cert_file: "/opt/certs/c.crt",
    key_file: "/opt/certs/c.key",
    server_name_override: "gw.internal",
  },
  compression: "zstd",
  retry_on_failure: { enabled: true, initial_interval: "1.5s", max_interval: "1m", max_elapsed_time: "0" },
  sending_queue: { enabled: true, num_consumers: 3, queue_size: 9007199254740991 },
};

export const CORPUS: readonly CorpusConfig[] = [
  { endpoint: "gw:4317" },
  { endpoint: "gw:4317", tls: { insecure: true }, headers: { Authorization: SECRET, "X-A": plain("1"), "X-B": FROM_HOST } },
  { endpoint: "gw:4317", ...CLIENT_SETTINGS, compression: "snappy" },
];
