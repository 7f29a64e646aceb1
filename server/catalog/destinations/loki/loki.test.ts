import { describe, expect, test } from "bun:test";
import { findType } from "../../registry.ts";
import { validateComponentConfig } from "../../validate.ts";
import { UNKNOWN_TARGET } from "../../versions.ts";

/** Looked up as the API does, so the test also fails when the type is not registered. */
const lokiDestination = findType("destination", "loki")!;

describe("loki destination", () => {
  test("OTLP/HTTP to /otlp, tenant as X-Scope-OrgID", () => {
    for (const endpoint of ["http://loki:3100", "http://loki:3100/", "http://loki:3100/otlp"]) {
      const config = validateComponentConfig("destination", "loki", { endpoint, tenant_id: "t1" });
      expect(lokiDestination.otelcol(config, UNKNOWN_TARGET)).toEqual({
        type: "otlphttp",
        config: { endpoint: "http://loki:3100/otlp", headers: { "X-Scope-OrgID": "t1" } },
      });
    }
  });
});
