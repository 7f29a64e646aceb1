import { describe, expect, test } from "bun:test";
import { findType } from "../../registry.ts";
import { validateComponentConfig } from "../../validate.ts";
import { UNKNOWN_TARGET } from "../../versions.ts";

/** Looked up as the API does, so the test also fails when the type is not registered. */
const debugDestination = findType("destination", "debug")!;

describe("debug destination", () => {
  test("is the debug exporter on Runtime O and has no Runtime R form, saying why", () => {
    const config = validateComponentConfig("destination", "debug", {});
    expect(debugDestination.otelcol(config, UNKNOWN_TARGET)).toEqual({ type: "debug", config: { verbosity: "basic" } });
    expect(debugDestination.alloy).toBeUndefined();
    expect(debugDestination.alloyUnavailable).toContain("otelcol.exporter.debug");
  });
});
