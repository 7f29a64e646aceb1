import { describe, expect, test } from "bun:test";
import { block, encodeAlloy } from "../../render/alloy-syntax.ts";
import { findType } from "../registry.ts";
import { validateComponentConfig } from "../validate.ts";

/** Looked up as the API does, so the test also fails when the type is not registered. */
const filelogSource = findType("source", "filelog")!;

describe("filelog source", () => {
  test("several excludes become one doublestar alternation per include", () => {
    const config = validateComponentConfig("source", "filelog", { include: ["/a/*.log"], exclude: ["/a/x.log", "/a/*.gz"] });
    expect(encodeAlloy([filelogSource.alloy!(config, "f", block("output", undefined, []))[0]!])).toContain('"__path_exclude__" = "{/a/x.log,/a/*.gz}"');
    expect(filelogSource.otelcol(config).config).toEqual({ include: ["/a/*.log"], exclude: ["/a/x.log", "/a/*.gz"], start_at: "end" });
  });
});
