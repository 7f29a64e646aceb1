import { describe, expect, test } from "bun:test";
import { findType } from "../../registry.ts";
import { validateComponentConfig } from "../../validate.ts";
import { UNKNOWN_TARGET } from "../../versions.ts";

/** Looked up as the API does, so the test also fails when the type is not registered. */
const attributesProcessor = findType("processor", "attributes")!;

describe("attributes processor", () => {
  test("actions take a value exactly when they set one", () => {
    const config = {
      actions: [
        { key: "a", action: "insert" },
        { key: "b", action: "delete", value: "x" },
        { key: "c", action: "upsert", value: 3 },
      ],
    };
    expect(() => validateComponentConfig("processor", "attributes", config)).toThrow(
      expect.objectContaining({
        details: [
          { path: "config.actions[0].value", message: "'insert' needs a value" },
          { path: "config.actions[1].value", message: "'delete' takes no value" },
        ],
      }),
    );
  });

  test("the actions are the attributes processor's own on Runtime O", () => {
    const config = validateComponentConfig("processor", "attributes", { actions: [{ key: "a", action: "delete" }] });
    expect(attributesProcessor.otelcol(config, "logs", UNKNOWN_TARGET)).toEqual({ type: "attributes", config: { actions: [{ key: "a", action: "delete" }] } });
  });
});
