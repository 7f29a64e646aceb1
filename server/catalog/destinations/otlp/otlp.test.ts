import { describe, expect, test } from "bun:test";
import { encodeAlloy } from "../../alloy-syntax.ts";
import { findType } from "../../registry.ts";
import { validateComponentConfig } from "../../validate.ts";
import { parseCollectorVersion, UNKNOWN_TARGET } from "../../versions.ts";

/** Looked up as the API does, so the test also fails when the type is not registered. */
const otlpDestination = findType("destination", "otlp")!;

describe("otlp destination", () => {
  test("the exporter is `otlp` for unknown versions and before 0.144.0, `otlp_grpc` from then on", () => {
    const config = validateComponentConfig("destination", "otlp", { endpoint: "gw:4317" });
    const typeAt = (version: string) => otlpDestination.otelcol(config, { version: parseCollectorVersion(version) }).type;
    expect(otlpDestination.otelcol(config, UNKNOWN_TARGET).type).toBe("otlp");
    expect(typeAt("0.143.9")).toBe("otlp");
    expect(typeAt("0.144.0")).toBe("otlp_grpc");
    expect(otlpDestination.alloy!(config, "o")[0]!.name).toBe("otelcol.exporter.otlp");
  });

  test("needs an endpoint", () => {
    expect(() => validateComponentConfig("destination", "otlp", {})).toThrow(
      expect.objectContaining({ details: [expect.objectContaining({ path: "config.endpoint" })] }),
    );
  });
});

describe("otlp destination client settings", () => {
  const full = {
    endpoint: "gw:4317",
    tls: {
      insecure_skip_verify: true,
      ca_file: "/opt/certs/ca.crt",
      cert_file: "/opt/certs/client.crt",
      key_file: "/opt/certs/client.key",
      server_name_override: "gw.internal",
    },
    compression: "zstd",
    retry_on_failure: { enabled: true, initial_interval: "1s", max_interval: "10s", max_elapsed_time: "2m" },
    sending_queue: { enabled: true, num_consumers: 4, queue_size: 5000 },
  };

  test("render under the collector's keys on Runtime O and Alloy's on Runtime R (server_name)", () => {
    const config = validateComponentConfig("destination", "otlp", full);
    // `enabled: true` is both runtimes' default (the form shows it checked): only `enabled: false` is written.
    expect(otlpDestination.otelcol(config, UNKNOWN_TARGET).config).toEqual({
      ...full,
      retry_on_failure: { initial_interval: "1s", max_interval: "10s", max_elapsed_time: "2m" },
      sending_queue: { num_consumers: 4, queue_size: 5000 },
    });
    const alloy = encodeAlloy(otlpDestination.alloy!(config, "o"));
    expect(alloy).toContain('compression = "zstd"');
    expect(alloy).toContain('server_name          = "gw.internal"');
    expect(alloy).not.toContain("server_name_override");
    expect(alloy).toMatch(/retry_on_failure \{[^}]*max_elapsed_time = "2m"/);
    expect(alloy).toMatch(/sending_queue \{[^}]*queue_size    = 5000/);
  });

  test("unset settings render nothing, so both runtimes keep their shared defaults", () => {
    const config = validateComponentConfig("destination", "otlp", { endpoint: "gw:4317" });
    expect(otlpDestination.otelcol(config, UNKNOWN_TARGET).config).toEqual({ endpoint: "gw:4317" });
    expect(encodeAlloy(otlpDestination.alloy!(config, "o"))).not.toMatch(/tls|compression|retry_on_failure|sending_queue/);
  });

  test("upstream's Validate() rules are refused with the key's path", () => {
    const problems = (config: Record<string, unknown>) => {
      try {
        validateComponentConfig("destination", "otlp", { endpoint: "gw:4317", ...config });
        return [];
      } catch (error) {
        return (error as { details: { path: string }[] }).details.map((d) => d.path);
      }
    };
    expect(problems({ tls: { cert_file: "/opt/c.crt" } })).toEqual(["config.tls.key_file"]);
    expect(problems({ retry_on_failure: { max_elapsed_time: "10s" } })).toEqual(["config.retry_on_failure.max_elapsed_time"]);
    expect(problems({ retry_on_failure: { max_elapsed_time: "0" } })).toEqual([]);
    expect(problems({ retry_on_failure: { enabled: false, max_elapsed_time: "1s" } })).toEqual([]);
    expect(problems({ retry_on_failure: { initial_interval: "5 s" } })).toEqual(["config.retry_on_failure.initial_interval"]);
    expect(problems({ compression: "lz4" })).toEqual(["config.compression"]);
    expect(problems({ sending_queue: { queue_size: 0 } })).toEqual(["config.sending_queue.queue_size"]);
    expect(problems({ tls: { ca_file: "certs/ca.crt" } })).toEqual(["config.tls.ca_file"]);
  });
});
