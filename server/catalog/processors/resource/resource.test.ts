import { describe, expect, test } from "bun:test";
import { block } from "../../alloy-syntax.ts";
import { findType } from "../../registry.ts";
import { validateComponentConfig } from "../../validate.ts";
import { ottlStatements } from "../actions.ts";

/** Looked up as the API does, so the test also fails when the type is not registered. */
const resourceProcessor = findType("processor", "resource")!;

describe("resource processor", () => {
  test("each action is an OTTL statement with safely quoted literals", () => {
    expect(
      ottlStatements([
        { key: "env", action: "insert", value: 'say "hi"\\' },
        { key: "n", action: "update", value: 3 },
        { key: "b", action: "upsert", value: false },
        { key: "gone", action: "delete" },
        { key: "mail", action: "hash" },
      ]),
    ).toEqual([
      String.raw`set(attributes["env"], "say \"hi\"\\") where attributes["env"] == nil`,
      `set(attributes["n"], 3) where attributes["n"] != nil`,
      `set(attributes["b"], false)`,
      `delete_key(attributes, "gone")`,
      `set(attributes["mail"], SHA256(attributes["mail"])) where attributes["mail"] != nil`,
    ]);
  });

  test("the transform statements block follows the flow's signal", () => {
    const config = validateComponentConfig("processor", "resource", { attributes: [{ key: "a", action: "delete" }] });
    const output = block("output", undefined, []);
    expect(resourceProcessor.alloy(config, "r", "metrics", output).body.map((s) => s.name)).toEqual(["error_mode", "metric_statements", "output"]);
    expect(resourceProcessor.alloy(config, "r", "traces", output).body.map((s) => s.name)).toContain("trace_statements");
  });

  test("an action that sets a value needs one", () => {
    expect(() => validateComponentConfig("processor", "resource", { attributes: [{ key: "k", action: "update" }] })).toThrow(
      expect.objectContaining({ details: [expect.objectContaining({ path: "config.attributes[0].value" })] }),
    );
  });
});
