import { describe, expect, test } from "bun:test";
import { validateComponentConfig } from "../../validate.ts";

describe("batch processor", () => {
  test("send_batch_size fits the uint32 both runtimes decode it into", () => {
    expect(validateComponentConfig("processor", "batch", { send_batch_size: 4294967295 }).send_batch_size).toBe(4294967295);
    expect(() => validateComponentConfig("processor", "batch", { send_batch_size: 4294967296 })).toThrow(
      expect.objectContaining({ details: [expect.objectContaining({ path: "config.send_batch_size" })] }),
    );
  });
});
