/**
 * Each type renders in both runtimes with the upstream component type ids
 * and keys; what one type does on its own is tested beside it
 * (sources/<type>/<type>.test.ts, …), and the full wiring by the golden files in
 * server/render.
 */
import { describe, expect, test } from "bun:test";
import { tokenize } from "../ottl/lexer.ts";
import { block, type AlloyBlock } from "./alloy-syntax.ts";
import { ottlStatements } from "./processors/actions.ts";
import type { CorpusConfig, ProcessorFolder } from "./folder.ts";
import { DESTINATION_TYPES, findType, FOLDERS, PROCESSOR_TYPES, SOURCE_TYPES } from "./registry.ts";
import type { OtelcolTarget } from "./types.ts";
import { validateComponentConfig } from "./validate.ts";
import { parseCollectorVersion, UNKNOWN_TARGET } from "./versions.ts";

const at = (version: string): OtelcolTarget => ({ version: parseCollectorVersion(version) });

/** Each type's first corpus config (its folder's corpus.ts; a processor's for logs), so a type added later has one too. */
const EXAMPLES: Record<string, Readonly<Record<string, unknown>>> = Object.fromEntries(
  FOLDERS.map((f) => [
    `${f.type.kind}/${f.type.type}`,
    f.type.kind === "processor" ? (f as ProcessorFolder).corpus.logs[0]! : (f.corpus as readonly CorpusConfig[])[0]!,
  ]),
);

const OUTPUT = block("output", undefined, []);

function example(kind: "source" | "destination" | "processor", type: string): Record<string, unknown> {
  return validateComponentConfig(kind, type, { ...EXAMPLES[`${kind}/${type}`] });
}

describe("every type has a valid example and renders in both runtimes", () => {
  test("sources: a receiver, and an Alloy chain through an otelcol receiver, ending in the otelcol component with the output", () => {
    const receivers: Record<string, string> = {};
    for (const t of SOURCE_TYPES) {
      const config = example("source", t.type);
      receivers[t.type] = t.otelcol(config).type;
      if (t.alloy === undefined) {
        expect(t.alloyUnavailable).toContain("Alloy has no component");
        continue;
      }
      const chain = t.alloy(config, "x", OUTPUT);
      expect(chain.some((b) => b.name.startsWith("otelcol.receiver."))).toBe(true);
      expect(chain.at(-1)!.name).toStartWith("otelcol.");
      expect(chain.at(-1)!.body).toContain(OUTPUT);
      expect(chain.every((b) => b.label === "x")).toBe(true);
    }
    // A type added later is checked against its own upstream record (conformance.test.ts).
    expect(receivers).toMatchObject({
      otlp: "otlp",
      filelog: "filelog",
      journald: "journald",
      hostmetrics: "hostmetrics",
      syslog: "syslog",
      prometheus: "prometheus",
      kafka: "kafka",
      k8s_cluster: "k8s_cluster",
      kubeletstats: "kubeletstats",
      k8s_events: "k8sobjects",
    });
  });

  test("destinations: an exporter, and an Alloy chain whose first block is the entry, or a reason there is none", () => {
    const exporters: Record<string, string> = {};
    const renamed: Record<string, string> = {};
    for (const t of DESTINATION_TYPES) {
      const config = example("destination", t.type);
      exporters[t.type] = t.otelcol(config, UNKNOWN_TARGET).type;
      renamed[t.type] = t.otelcol(config, at("0.144.0")).type;
      if (t.alloy) expect(t.alloy(config, "x")[0]!.name).toBe(t.alloyEntry);
      else expect(t.alloyUnavailable).toContain("experimental");
    }
    // Unknown versions get the names every version accepts; 0.144.0 renamed the OTLP exporters.
    expect(exporters).toMatchObject({
      otlp: "otlp",
      otlphttp: "otlphttp",
      debug: "debug",
      prometheusremotewrite: "prometheusremotewrite",
      loki: "otlphttp",
    });
    expect(renamed).toMatchObject({
      otlp: "otlp_grpc",
      otlphttp: "otlp_http",
      debug: "debug",
      prometheusremotewrite: "prometheusremotewrite",
      loki: "otlp_http",
    });
    expect(findType("destination", "otlp")!.otelcol(example("destination", "otlp"), at("0.143.9")).type).toBe("otlp");
  });

  test("processors: the same type id in Runtime O, one entry block carrying the output in Runtime R", () => {
    for (const t of PROCESSOR_TYPES) {
      const config = example("processor", t.type);
      expect(t.otelcol(config, "logs", UNKNOWN_TARGET).type).toBe(t.type);
      const b = t.alloy(config, "x", "logs", OUTPUT);
      expect(b.name).toBe(t.alloyEntry);
      expect(b.body).toContain(OUTPUT);
    }
  });
});

describe("scrape timing on Alloy (prometheus.scrape's Validate(): scrape_timeout <= scrape_interval, timeout default 10s)", () => {
  const scrape = (blocks: AlloyBlock[]) => {
    const b = blocks.find((x) => x.name === "prometheus.scrape")!;
    return Object.fromEntries(b.body.flatMap((s) => (s.kind === "attribute" && s.name.startsWith("scrape_") ? [[s.name, s.value]] : [])));
  };

  test("below 10s the timeout is lowered to the interval, as Prometheus does on Runtime O", () => {
    const prometheus = findType("source", "prometheus")!;
    const config = validateComponentConfig("source", "prometheus", { targets: ["a:9100"], scrape_interval: "5s" });
    expect(scrape(prometheus.alloy!(config, "p", OUTPUT))).toEqual({ scrape_interval: "5s", scrape_timeout: "5s" });
    expect(prometheus.otelcol(config).config).toEqual({
      config: { scrape_configs: [{ job_name: "prometheus", scrape_interval: "5s", static_configs: [{ targets: ["a:9100"] }] }] },
    });
    const hostmetrics = findType("source", "hostmetrics")!;
    expect(scrape(hostmetrics.alloy!(validateComponentConfig("source", "hostmetrics", { collection_interval: "2.5s" }), "h", OUTPUT))).toEqual({
      scrape_interval: "2.5s",
      scrape_timeout: "2.5s",
    });
  });

  test("from 10s on the default timeout already fits and is not written", () => {
    const prometheus = findType("source", "prometheus")!;
    for (const interval of ["10s", "1m", "1h30m"]) {
      const config = validateComponentConfig("source", "prometheus", { targets: ["a:9100"], scrape_interval: interval });
      expect(scrape(prometheus.alloy!(config, "p", OUTPUT))).toEqual({ scrape_interval: interval });
    }
  });
});

describe("numbers in attribute actions", () => {
  test("every accepted number renders as an OTTL token that lexes to the same value", () => {
    const values = [0, -0, 7, -42, 9007199254740991, -9007199254740991, 0.5, -2.25, 1.5e-7, 1e-7, 123456.789, 4503599627370495.5, 5e-324];
    for (const value of values) {
      const config = validateComponentConfig("processor", "resource", { attributes: [{ key: "k", action: "upsert", value }] });
      const [statement] = ottlStatements((config as { attributes: Parameters<typeof ottlStatements>[0] }).attributes);
      const tokens = tokenize(statement!);
      expect(tokens.filter((t) => t.kind === "error")).toEqual([]);
      const literal = tokens.find((t) => t.kind === "int" || t.kind === "float")!;
      expect(Number(literal.kind === "int" ? literal.value : literal.value)).toBe(value === 0 ? 0 : value);
    }
  });

  test("numbers that cannot be written exactly are refused, naming the value", () => {
    for (const value of [1e21, -1e21, 9007199254740992, Number.NaN, Number.POSITIVE_INFINITY]) {
      for (const [type, list] of [
        ["attributes", "actions"],
        ["resource", "attributes"],
      ] as const) {
        expect(() =>
          validateComponentConfig("processor", type, {
            [list]: [
              { key: "a", action: "delete" },
              { key: "k", action: "insert", value },
            ],
          }),
        ).toThrow(expect.objectContaining({ details: [expect.objectContaining({ path: `config.${list}[1].value` })] }));
      }
    }
  });
});
