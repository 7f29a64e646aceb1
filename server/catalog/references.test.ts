import { describe, expect, test } from "bun:test";
import { parseReferences } from "../../shared/attribute-refs.ts";
import { ValidationError, type ErrorDetail } from "../errors.ts";
import type { ComponentKind } from "./types.ts";
import { mergeOverrides, validateComponentConfig } from "./validate.ts";

function problems(kind: ComponentKind, type: string, config: unknown): ErrorDetail[] {
  try {
    validateComponentConfig(kind, type, config);
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).details;
  }
  throw new Error("expected a ValidationError");
}

describe("the reference grammar", () => {
  test("several references among other text, each with its key and place", () => {
    const text = 'https://{{attr "datacenter"}}.{{attr "k8s.cluster/name-1:x"}}.example.com';
    expect(parseReferences(text).references!.map((r) => [r.key, text.slice(r.start, r.end)])).toEqual([
      ["datacenter", '{{attr "datacenter"}}'],
      ["k8s.cluster/name-1:x", '{{attr "k8s.cluster/name-1:x"}}'],
    ]);
    expect(parseReferences("no reference, {{ or {attr").references).toEqual([]);
  });

  test("anything else starting {{attr is malformed, at its column", () => {
    const long = "k".repeat(129);
    for (const [text, column] of [
      ["{{attr datacenter}}", 1],
      ['x{{attr "a b"}}', 2],
      ['{{attr  "a"}}', 1],
      ['{{attr "a"}', 1],
      ["{{attr 'a'}}", 1],
      ['{{attr ""}}', 1],
      [`{{attr "${long}"}}`, 1],
      ['{{attr "ok"}} then {{attr', 20],
      ['{{attr \\"a\\"}}', 1],
    ] as const) {
      expect(parseReferences(text).problem?.column).toBe(column);
    }
  });
});

describe("where a write may hold a reference", () => {
  test("in string values, also where a format applies: the format is checked once filled in, per collector", () => {
    const config = { endpoint: '{{attr "scheme"}}://{{attr "host"}}', headers: { "X-Tenant": { value: 'tenant-{{attr "tenant"}}', secret: false } } };
    expect(validateComponentConfig("destination", "otlphttp", config)).toMatchObject(config);
    expect(validateComponentConfig("source", "otlp", { grpc: { endpoint: '0.0.0.0:{{attr "port"}}' } }).grpc).toMatchObject({
      endpoint: '0.0.0.0:{{attr "port"}}',
    });
    expect(validateComponentConfig("destination", "debug", { verbosity: '{{attr "verbosity"}}' })).toEqual({ verbosity: '{{attr "verbosity"}}' });
    expect(validateComponentConfig("source", "prometheus", { targets: ['{{attr "host"}}:9100'], job_name: '{{attr "job"}}' })).toMatchObject({
      targets: ['{{attr "host"}}:9100'],
    });
    expect(validateComponentConfig("processor", "resource", { attributes: [{ key: "dc", action: "upsert", value: '{{attr "datacenter"}}' }] })).toBeDefined();
    // Overrides too, named from their own root.
    expect(mergeOverrides("destination", "otlp", { endpoint: "gw:4317" }, { endpoint: '{{attr "gateway"}}:4317' })).toMatchObject({
      endpoint: '{{attr "gateway"}}:4317',
    });
  });

  test("a malformed reference is refused, naming the key path and the column", () => {
    const [problem] = problems("destination", "otlphttp", { endpoint: "https://{{attr datacenter}}.example.com" });
    expect(problem!.path).toBe("config.endpoint");
    expect(problem!.message).toContain("column 9");
    expect(problems("source", "prometheus", { targets: ["a:1", '{{attr "h" }}:9100'] })[0]!.path).toBe("config.targets[1]");
    try {
      mergeOverrides("destination", "otlp", { endpoint: "gw:4317" }, { endpoint: "{{attr}}" });
      throw new Error("accepted");
    } catch (error) {
      expect((error as ValidationError).details[0]!.path).toBe("configOverrides.endpoint");
    }
  });

  test("not in OTTL, saying why", () => {
    const [problem] = problems("processor", "filter", { logs: { log_record: ['attributes["dc"] == "{{attr "dc"}}"'] } });
    expect(problem!.path).toBe("config.logs.log_record[0]");
    expect(problem!.message).toContain("OTTL code");
    expect(problem!.message).toContain("never become code");
  });

  test("not in a value svc reads to build the configuration, nor in a host path", () => {
    const cases: [ComponentKind, string, Record<string, unknown>, string, string][] = [
      ["source", "filelog", { include: ['/var/log/{{attr "app"}}/*.log'] }, "config.include[0]", "host-path policy"],
      ["source", "filelog", { include: ["/var/log/a.log"], start_at: '{{attr "start"}}' }, "config.start_at", "Alloy's configuration"],
      ["source", "journald", { directory: '/var/log/{{attr "j"}}' }, "config.directory", "host-path policy"],
      ["source", "journald", { units: ['{{attr "unit"}}'] }, "config.units[0]", "relabel"],
      ["source", "syslog", { transport: '{{attr "t"}}' }, "config.transport", "section"],
      ["source", "prometheus", { targets: ["a:1"], scrape_interval: '{{attr "i"}}' }, "config.scrape_interval", "scrape timeout"],
      ["source", "hostmetrics", { collection_interval: '{{attr "i"}}' }, "config.collection_interval", "scrape timeout"],
      ["processor", "attributes", { actions: [{ key: "k", action: '{{attr "a"}}', value: "v" }] }, "config.actions[0].action", "reads the action"],
    ];
    for (const [kind, type, config, path, why] of cases) {
      const [problem] = problems(kind, type, config);
      expect(problem!.path).toBe(path);
      expect(problem!.message).toContain("cannot hold an attribute reference");
      expect(problem!.message).toContain(why);
    }
  });

  test("not in a map key, nor in a secret", () => {
    const key = problems("destination", "otlphttp", { endpoint: "https://x", headers: { '{{attr "h"}}': { value: "v", secret: false } } });
    expect(key[0]!.path).toBe('config.headers.{{attr "h"}}');
    expect(key[0]!.message).toContain("key");
    const secret = problems("destination", "otlphttp", { endpoint: "https://x", headers: { Authorization: 'Bearer {{attr "token"}}' } });
    expect(secret[0]!.path).toBe("config.headers.Authorization");
    expect(secret[0]!.message).toContain("{value, secret: false}");
  });

  test("a reference does not make a string fit a field of another type", () => {
    const [problem] = problems("processor", "batch", { send_batch_size: '{{attr "size"}}' });
    expect(problem!.path).toBe("config.send_batch_size");
  });

  test("Loki: a URL must not end in a reference, since svc appends /otlp unless the URL ends in it", () => {
    expect(validateComponentConfig("destination", "loki", { endpoint: 'http://{{attr "host"}}:3100' })).toBeDefined();
    expect(validateComponentConfig("destination", "loki", { endpoint: 'http://{{attr "host"}}/otlp/' })).toBeDefined();
    expect(validateComponentConfig("destination", "loki", { endpoint: 'http://{{attr "host"}}/otl' })).toBeDefined();
    for (const endpoint of ['{{attr "url"}}', 'http://loki:3100/{{attr "path"}}/', 'http://loki/{{attr "p"}}otlp', 'http://{{attr "h"}}p']) {
      const [problem] = problems("destination", "loki", { endpoint });
      expect(problem!.path).toBe("config.endpoint");
      expect(problem!.message).toContain("/otlp");
    }
  });
});
