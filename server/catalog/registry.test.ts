import { describe, expect, test } from "bun:test";
import Ajv2020 from "ajv/dist/2020.js";
import { existsSync } from "node:fs";
import { SIGNALS } from "../../shared/config-records.ts";
import { catalogView, COMPONENT_TYPES, findType } from "./registry.ts";
import { COMPONENT_KINDS } from "./types.ts";

describe("catalog", () => {
  test("has the required types of each kind, in this order (a type added later may come anywhere)", () => {
    const ids = (kind: string, required: readonly string[]) => COMPONENT_TYPES.filter((t) => t.kind === kind && required.includes(t.type)).map((t) => t.type);
    const sources = ["otlp", "filelog", "journald", "hostmetrics", "syslog", "prometheus", "kafka", "k8s_cluster", "kubeletstats", "k8s_events"];
    const destinations = ["otlp", "otlphttp", "debug", "prometheusremotewrite", "loki"];
    const processors = ["filter", "batch", "attributes", "resource", "transform"];
    expect(ids("source", sources)).toEqual(sources);
    expect(ids("destination", destinations)).toEqual(destinations);
    expect(ids("processor", processors)).toEqual(processors);
  });

  test("findType looks up by kind and type id", () => {
    expect(findType("source", "otlp")?.title).toBe("OTLP");
    expect(findType("destination", "otlp")?.kind).toBe("destination");
    expect(findType("processor", "otlp")).toBeUndefined();
    expect(findType("source", "nope")).toBeUndefined();
  });

  test("every type names signals from the known set and has a closed object schema", () => {
    for (const t of COMPONENT_TYPES) {
      expect(t.signals.length).toBeGreaterThan(0);
      for (const s of t.signals) expect(SIGNALS).toContain(s);
      expect(t.schema.type).toBe("object");
      expect(t.schema.additionalProperties).toBe(false);
      expect(t.title.length).toBeGreaterThan(0);
      expect(t.description.length).toBeGreaterThan(0);
    }
  });

  test("every type is a folder: its module, its test, its upstream record, its corpus and the index that registers it", () => {
    const missing = COMPONENT_TYPES.flatMap((t) =>
      [`${t.type}.ts`, `${t.type}.test.ts`, "upstream.ts", "corpus.ts", "index.ts"]
        .map((file) => `${t.kind}s/${t.type}/${file}`)
        .filter((file) => !existsSync(new URL(file, import.meta.url))),
    );
    expect(missing).toEqual([]);
  });
});

describe("catalogView", () => {
  const view = catalogView();

  test("is JSON-serialisable and survives a round trip unchanged", () => {
    expect(JSON.parse(JSON.stringify(view))).toEqual(view);
    expect(Object.keys(view)).toEqual(["sources", "destinations", "processors"]);
    for (const kind of COMPONENT_KINDS) {
      const entries = view[`${kind}s` as keyof typeof view];
      expect(entries.map((e) => e.type)).toEqual(COMPONENT_TYPES.filter((t) => t.kind === kind).map((t) => t.type));
      for (const e of entries) {
        const keys =
          e.unavailable === undefined
            ? ["type", "title", "description", "signals", "runtimes", "schema"]
            : ["type", "title", "description", "signals", "runtimes", "unavailable", "schema"];
        expect(Object.keys(e)).toEqual(keys);
      }
    }
  });

  test("each schema is valid JSON Schema (2020-12) that compiles", () => {
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    ajv.addKeyword("errorMessage");
    // Annotations of sensitive fields (secrets/values.ts): forms render them write-only.
    ajv.addKeyword("sensitive");
    ajv.addKeyword("plainAllowed");
    // Fields that take no attribute reference, and why (schemas.ts NoReferences): forms can say so.
    ajv.addKeyword("noAttributeReferences");
    for (const e of [...view.sources, ...view.destinations, ...view.processors]) {
      expect(ajv.validateSchema(e.schema)).toBe(true);
      expect(() => ajv.compile(e.schema)).not.toThrow();
    }
  });

  test("fields with a default are not required, so a form may leave them out", () => {
    const filelog = view.sources.find((e) => e.type === "filelog")!.schema;
    expect(filelog.required).toEqual(["include"]);
    const batch = view.processors.find((e) => e.type === "batch")!.schema;
    expect(batch.required).toBeUndefined();
    const ajv = new Ajv2020({ strict: false });
    expect(ajv.validate(filelog, { include: ["/var/log/*.log"] })).toBe(true);
    expect(ajv.validate(filelog, { include: ["/var/log/*.log"], typo: 1 })).toBe(false);
  });

  test("carries defaults and descriptions for forms", () => {
    const hostmetrics = view.sources.find((e) => e.type === "hostmetrics")!.schema as {
      properties: Record<string, { default?: unknown; description?: string }>;
    };
    expect(hostmetrics.properties.collection_interval!.default).toBe("60s");
    expect(hostmetrics.properties.scrapers!.description).toBeString();
  });
});

describe("runtimes in the catalog view", () => {
  test("debug, k8s_cluster and kubeletstats run on Runtime O only, and say why; every other type runs on both", () => {
    const view = catalogView();
    for (const e of [...view.sources, ...view.destinations, ...view.processors]) {
      if (e.type === "debug") {
        expect(e.runtimes).toEqual(["otelcol"]);
        expect(e.unavailable?.alloy).toContain("otelcol.exporter.debug) is experimental");
      } else if (e.type === "k8s_cluster" || e.type === "kubeletstats") {
        expect(e.runtimes).toEqual(["otelcol"]);
        expect(e.unavailable?.alloy).toContain(`grafana/alloy has no otelcol.receiver.${e.type}`);
      } else {
        expect(e.runtimes).toEqual(["otelcol", "alloy"]);
        expect(e.unavailable).toBeUndefined();
      }
    }
  });
});
