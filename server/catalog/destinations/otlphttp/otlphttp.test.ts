import { describe, expect, test } from "bun:test";
import { encodeAlloy } from "../../alloy-syntax.ts";
import { findType } from "../../registry.ts";
import { validateComponentConfig } from "../../validate.ts";
import { UNKNOWN_TARGET } from "../../versions.ts";

/** Looked up as the API does, so the test also fails when the type is not registered. */
const otlphttpDestination = findType("destination", "otlphttp")!;

describe("otlphttp destination", () => {
  test("headers render in key order whatever order they were stored in", () => {
    const config = validateComponentConfig("destination", "otlphttp", { endpoint: "http://x", headers: { b: "2", a: "1" } });
    expect(Object.keys(otlphttpDestination.otelcol(config, UNKNOWN_TARGET).config.headers as object)).toEqual(["a", "b"]);
  });
});

describe("otlphttp destination client settings", () => {
  test("TLS files, compression, retries and queue on both runtimes; no insecure switch (the URL's scheme decides)", () => {
    const config = validateComponentConfig("destination", "otlphttp", {
      endpoint: "https://otlp.example.com",
      tls: { ca_file: "/opt/certs/ca.crt", server_name_override: "otlp.internal" },
      compression: "none",
      retry_on_failure: { enabled: false },
      sending_queue: { num_consumers: 2 },
    });
    expect(otlphttpDestination.otelcol(config, UNKNOWN_TARGET).config).toEqual({
      endpoint: "https://otlp.example.com",
      tls: { ca_file: "/opt/certs/ca.crt", server_name_override: "otlp.internal" },
      compression: "none",
      retry_on_failure: { enabled: false },
      sending_queue: { num_consumers: 2 },
    });
    const alloy = encodeAlloy(otlphttpDestination.alloy!(config, "h"));
    expect(alloy).toMatch(/client \{[\s\S]*compression = "none"[\s\S]*tls \{[^}]*server_name = "otlp.internal"/);
    expect(alloy).toMatch(/retry_on_failure \{\s*enabled = false\s*\}/);
    expect(() => validateComponentConfig("destination", "otlphttp", { endpoint: "https://x", tls: { insecure: true } })).toThrow();
  });
});
