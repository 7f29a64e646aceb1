import { describe, expect, test } from "bun:test";
import { findType } from "../registry.ts";
import { validateComponentConfig } from "../validate.ts";
import { UNKNOWN_TARGET } from "../versions.ts";

/** Looked up as the API does, so the test also fails when the type is not registered. */
const otlphttpDestination = findType("destination", "otlphttp")!;

describe("otlphttp destination", () => {
  test("headers render in key order whatever order they were stored in", () => {
    const config = validateComponentConfig("destination", "otlphttp", { endpoint: "http://x", headers: { b: "2", a: "1" } });
    expect(Object.keys(otlphttpDestination.otelcol(config, UNKNOWN_TARGET).config.headers as object)).toEqual(["a", "b"]);
  });
});
