import { describe, expect, test } from "bun:test";
import type { PipelineRecord } from "../../../../shared/config-records.ts";
import { block, encodeAlloy, type AlloyBlock } from "../../alloy-syntax.ts";
import { planCollector } from "../../../render/plan.ts";
import { routeRuntimeRProblems } from "../../../render/parity.ts";
import { findType } from "../../registry.ts";
import { validateComponentConfig } from "../../validate.ts";

/** Looked up as the API does, so the test also fails when the type is not registered. */
const filelogSource = findType("source", "filelog")!;

const alloyBlocks = (config: Record<string, unknown>): AlloyBlock[] => filelogSource.alloy!(config, "f", block("output", undefined, []));
const statementsOf = (blocks: AlloyBlock[]): string[] => {
  const transform = blocks.find((b) => b.name === "otelcol.processor.transform")!;
  const statements = transform.body.find((s) => s.kind === "block" && s.name === "log_statements") as AlloyBlock;
  const list = statements.body.find((s) => s.kind === "attribute" && s.name === "statements");
  return list?.kind === "attribute" ? (list.value as { text: string }[]).map((s) => s.text) : [];
};
const pathsOf = (config: Record<string, unknown>): string[] => {
  try {
    validateComponentConfig("source", "filelog", { include: ["/var/log/*.log"], ...config });
    return [];
  } catch (error) {
    return (error as { details: { path: string }[] }).details.map((d) => d.path);
  }
};

describe("filelog source", () => {
  test("several excludes become one doublestar alternation per include", () => {
    const config = validateComponentConfig("source", "filelog", { include: ["/a/*.log"], exclude: ["/a/x.log", "/a/*.gz"] });
    expect(encodeAlloy([alloyBlocks(config)[0]!])).toContain('"__path_exclude__" = "{/a/x.log,/a/*.gz}"');
    expect(filelogSource.otelcol(config).config).toEqual({ include: ["/a/*.log"], exclude: ["/a/x.log", "/a/*.gz"], start_at: "end" });
  });

  test("without parsing or multiline nothing is added on either runtime", () => {
    const config = validateComponentConfig("source", "filelog", { include: ["/a/*.log"] });
    expect(filelogSource.otelcol(config).config).toEqual({ include: ["/a/*.log"], start_at: "end" });
    const blocks = alloyBlocks(config);
    expect(blocks.map((b) => b.name)).toEqual(["local.file_match", "loki.source.file", "otelcol.receiver.loki", "otelcol.processor.transform"]);
    expect(statementsOf(blocks).some((s) => s.includes("merge_maps"))).toBe(false);
  });
});

describe("filelog parsing", () => {
  const json = {
    include: ["/var/log/app/*.json"],
    parser: { format: "json", timestamp: { field: "ts", layout: "%Y-%m-%dT%H:%M:%S%z" }, severity: { field: "log.level" } },
  };

  test("JSON: a json_parser operator on Runtime O, ParseJSON merged into the attributes on Runtime R", () => {
    const config = validateComponentConfig("source", "filelog", json);
    expect(filelogSource.otelcol(config).config.operators).toEqual([
      {
        type: "json_parser",
        timestamp: { parse_from: "attributes.ts", layout_type: "strptime", layout: "%Y-%m-%dT%H:%M:%S%z" },
        severity: { parse_from: "attributes.log.level" },
      },
    ]);
    const statements = statementsOf(alloyBlocks(config));
    // After the shaping statements (trim, loki-only keys removed), so a parsed "filename" field survives as on Runtime O.
    const merge = statements.indexOf('merge_maps(attributes, ParseJSON(body), "upsert")');
    expect(merge).toBeGreaterThan(statements.findIndex((s) => s.startsWith("delete_key")));
    expect(statements).toContain('set(time, Time(attributes["ts"], "%Y-%m-%dT%H:%M:%S%z"))');
    const level = 'ConvertCase(String(attributes["log"]["level"]), "lower")';
    expect(statements).toContain(`set(severity_number, SEVERITY_NUMBER_WARN) where ${level} == "warn" or ${level} == "13" or ${level} == "warning"`);
    expect(statements).toContain(`set(severity_number, SEVERITY_NUMBER_ERROR4) where ${level} == "error4" or ${level} == "20" or ${level} == "err4"`);
    expect(statements.filter((s) => s.startsWith("set(severity_number"))).toHaveLength(24);
    expect(statements.at(-1)).toStartWith('set(severity_text, String(attributes["log"]["level"])) where IsString(');
  });

  test("regex: a regex_parser with the pattern on Runtime O, ExtractPatterns with the same RE2 text on Runtime R", () => {
    const regex = "^(?P<time>\\S+) (?P<level>\\w+) (?P<msg>.*)$";
    const config = validateComponentConfig("source", "filelog", {
      include: ["/var/log/a.log"],
      parser: { format: "regex", regex, severity: { field: "level" } },
    });
    expect(filelogSource.otelcol(config).config.operators).toEqual([{ type: "regex_parser", regex, severity: { parse_from: "attributes.level" } }]);
    expect(statementsOf(alloyBlocks(config))).toContain(`merge_maps(attributes, ExtractPatterns(body, ${JSON.stringify(regex)}), "upsert")`);
  });

  test("rules the schema cannot say are refused with the key's path", () => {
    expect(pathsOf({ parser: { format: "regex" } })).toEqual(["config.parser.regex"]);
    expect(pathsOf({ parser: { format: "regex", regex: "^(\\w+)$" } })).toEqual(["config.parser.regex"]);
    expect(pathsOf({ parser: { format: "regex", regex: "^(?P<a>\\w+" } })).toEqual(["config.parser.regex"]);
    expect(pathsOf({ parser: { format: "regex", regex: "(?<=a)b" } })).toEqual(["config.parser.regex"]);
    // A group name only counts outside escapes and character classes.
    expect(pathsOf({ parser: { format: "regex", regex: "\\((?P<a>x)" } })).toEqual([]);
    expect(pathsOf({ parser: { format: "regex", regex: "\\(\\?P<a>x" } })).toEqual(["config.parser.regex"]);
    expect(pathsOf({ parser: { format: "regex", regex: "[](?P<a>]x" } })).toEqual(["config.parser.regex"]);
    expect(pathsOf({ parser: { format: "regex", regex: "(?<a>x)" } })).toEqual([]);
    // Quoted by \Q…\E or inside a class (after a POSIX class), (?P<x>…) is literal text to RE2: no group.
    expect(pathsOf({ parser: { format: "regex", regex: "\\Q(?P<x>a)\\E" } })).toEqual(["config.parser.regex"]);
    expect(pathsOf({ parser: { format: "regex", regex: "[[:alpha:](?P<x>a)]" } })).toEqual(["config.parser.regex"]);
    expect(pathsOf({ parser: { format: "regex", regex: "[[:alpha:]](?P<x>a)" } })).toEqual([]);
    expect(pathsOf({ parser: { format: "json", regex: "(?P<a>.)" } })).toEqual(["config.parser.regex"]);
    expect(pathsOf({ parser: { severity: { field: "level" } } })).toEqual(["config.parser.severity"]);
    expect(pathsOf({ parser: { format: "json", timestamp: { field: "ts" } } })).toEqual(["config.parser.timestamp.layout"]);
    expect(pathsOf({ parser: { format: "json", timestamp: { field: "ts", layout: "2006-01-02" } } })).toEqual(["config.parser.timestamp.layout"]);
    expect(pathsOf({ parser: { format: "json", severity: { field: 'a"]) or true' } } })).toEqual(["config.parser.severity.field"]);
    // ctimefmt.ToNative refuses a directive it does not know and any digit.
    for (const layout of ["%Q", "%Ey", "%Y %C", "%Y-%m-%d 00:00", "%Y-%m-%dT%H:%M:%S+0100"]) {
      expect(pathsOf({ parser: { format: "json", timestamp: { field: "ts", layout } } })).toEqual(["config.parser.timestamp.layout"]);
    }
    for (const layout of ["%Y-%m-%dT%H:%M:%S.%L%z", "%b %e %H:%M:%S", "%d/%b/%Y:%T %z", "%c", "%s%%"]) {
      expect(pathsOf({ parser: { format: "json", timestamp: { field: "ts", layout } } })).toEqual([]);
    }
    expect(pathsOf({ parser: { format: "xml" } })).toEqual(["config.parser.format"]);
  });
});

describe("filelog multiline", () => {
  test("line_start_pattern: the receiver's multiline on Runtime O, loki.process stage.multiline between the file and the converter on Runtime R", () => {
    const config = validateComponentConfig("source", "filelog", { include: ["/var/log/a.log"], multiline: { line_start_pattern: "^\\d{4}-\\d{2}-\\d{2}" } });
    expect(filelogSource.otelcol(config).config.multiline).toEqual({ line_start_pattern: "^\\d{4}-\\d{2}-\\d{2}" });
    const text = encodeAlloy(alloyBlocks(config));
    expect(text).toMatch(/loki\.source\.file "f" \{[^}]*forward_to\s+= \[loki\.process\.f\.receiver\]/);
    expect(text).toMatch(
      /loki\.process "f" \{\s*forward_to = \[otelcol\.receiver\.loki\.f\.receiver\]\s*stage\.multiline \{\s*firstline\s+= "\^\\\\d\{4\}-\\\\d\{2\}-\\\\d\{2\}"\s*max_wait_time = "500ms"/,
    );
    expect(filelogSource.alloyProblem!(config)).toBeUndefined();
  });

  test("a start pattern must be anchored, valid RE2, and not set with an end pattern", () => {
    expect(pathsOf({ multiline: { line_start_pattern: "ERROR" } })).toEqual(["config.multiline.line_start_pattern"]);
    expect(pathsOf({ multiline: { line_start_pattern: "^[" } })).toEqual(["config.multiline.line_start_pattern"]);
    expect(pathsOf({ multiline: { line_start_pattern: "^a", line_end_pattern: "b$" } })).toEqual(["config.multiline.line_end_pattern"]);
    expect(pathsOf({ multiline: { line_start_pattern: "^(?=a)" } })).toEqual(["config.multiline.line_start_pattern"]);
  });

  test("a pattern that matches the empty string is refused: the collector's split func would not advance", () => {
    for (const line_start_pattern of ["^", "^x*", "^(a|)"])
      expect(pathsOf({ multiline: { line_start_pattern } })).toEqual(["config.multiline.line_start_pattern"]);
    for (const line_end_pattern of ["x*", "$", "^", "(?:)"])
      expect(pathsOf({ multiline: { line_end_pattern } })).toEqual(["config.multiline.line_end_pattern"]);
    expect(pathsOf({ multiline: { line_start_pattern: "^\\S" } })).toEqual([]);
    expect(pathsOf({ multiline: { line_end_pattern: "\\}$" } })).toEqual([]);
  });

  test("line_end_pattern renders on Runtime O and is refused on Runtime R, at render and when routing to an Alloy collector", () => {
    const config = validateComponentConfig("source", "filelog", { include: ["/var/log/a.log"], multiline: { line_end_pattern: "\\}$" } });
    expect(filelogSource.otelcol(config).config.multiline).toEqual({ line_end_pattern: "\\}$" });
    expect(filelogSource.alloyProblem!(config)).toContain("no Alloy equivalent");

    const source = { id: "s", name: "files", type: "filelog", config: { include: ["/var/log/a.log"], multiline: { line_end_pattern: "\\}$" } } };
    const pipeline: PipelineRecord = {
      id: "p",
      name: "p",
      signal: "logs",
      topology: {
        nodes: [
          { id: "in", kind: "source" },
          { id: "out", kind: "destination", ref: "d" },
        ],
        edges: [{ id: "e", source: "in", target: "out" }],
      },
    };
    expect(routeRuntimeRProblems(source, pipeline).map((p) => p.path)).toEqual(["sourceId"]);
    const input = {
      collector: { id: "c", name: "c", version: null },
      sources: new Map([["s", source]]),
      destinations: new Map([["d", { id: "d", name: "d", type: "otlp", config: { endpoint: "gw:4317" } }]]),
      pipelines: new Map([["p", pipeline]]),
      activations: {
        collectorId: "c",
        sources: [{ sourceId: "s", configOverrides: {} }],
        destinations: [{ destinationId: "d", configOverrides: {}, tags: {} }],
      },
      routes: [{ id: "r", collectorId: "c", sourceId: "s", pipelineId: "p" }],
    };
    expect(() => planCollector(input, "otelcol")).not.toThrow();
    expect(() => planCollector(input, "alloy")).toThrow("cannot run on Alloy (remote config): multiline.line_end_pattern");
  });
});
