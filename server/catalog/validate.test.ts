import { describe, expect, test } from "bun:test";
import { Type } from "@sinclair/typebox";
import { ValidationError, type ErrorDetail } from "../errors.ts";
import { Sensitive } from "../../shared/sensitive.ts";
import type { ComponentKind } from "./types.ts";
import { unwritableText, validateComponentConfig, validateConfig } from "./validate.ts";

/** The problems of a config that must fail. */
function problems(kind: ComponentKind, type: string, config: unknown, root?: string): ErrorDetail[] {
  try {
    validateComponentConfig(kind, type, config, root);
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).details;
  }
  throw new Error("expected a ValidationError");
}

const paths = (details: ErrorDetail[]) => details.map((d) => d.path);

describe("defaults", () => {
  test("fill in every defaulted field, nested ones too", () => {
    expect(validateComponentConfig("source", "otlp", {})).toEqual({
      grpc: { enabled: true, endpoint: "localhost:4317" },
      http: { enabled: true, endpoint: "localhost:4318" },
    });
    expect(validateComponentConfig("destination", "otlp", { endpoint: "gw:4317" })).toEqual({
      endpoint: "gw:4317",
      tls: { insecure: false },
      headers: {},
      retry_on_failure: { enabled: true },
      sending_queue: { enabled: true },
    });
    expect(validateComponentConfig("processor", "batch", {})).toEqual({ send_batch_size: 8192, timeout: "200ms" });
    expect(validateComponentConfig("processor", "filter", { logs: { log_record: ["true"] } })).toEqual({
      error_mode: "ignore",
      logs: { log_record: ["true"] },
    });
  });

  test("keep given values and leave the input untouched", () => {
    const input = { include: ["/a.log"], start_at: "beginning" };
    const out = validateComponentConfig("source", "filelog", input);
    expect(out).toEqual({ include: ["/a.log"], exclude: [], start_at: "beginning", parser: { format: "none", timestamp: {}, severity: {} }, multiline: {} });
    expect(input).toEqual({ include: ["/a.log"], start_at: "beginning" });
  });

  test("leave optional fields without a default out", () => {
    expect(validateComponentConfig("source", "journald", {})).toEqual({ units: [] });
    expect(validateComponentConfig("destination", "loki", { endpoint: "http://loki:3100" })).toEqual({
      endpoint: "http://loki:3100",
      headers: {},
    });
  });
});

describe("bad configs name the key path", () => {
  test("a missing required key", () => {
    expect(paths(problems("destination", "otlphttp", {}))).toEqual(["config.endpoint"]);
  });

  test("a key of the wrong form, with a readable message", () => {
    const [p] = problems("destination", "otlphttp", { endpoint: "otlp.example.com" });
    expect(p).toEqual({ path: "config.endpoint", message: "must be an http:// or https:// URL" });
  });

  test("an unknown key, nested or not", () => {
    expect(paths(problems("destination", "otlp", { endpoint: "x:1", tsl: {} }))).toEqual(["config.tsl"]);
    expect(paths(problems("destination", "otlp", { endpoint: "x:1", tls: { insecure: true, ca: "x" } }))).toEqual(["config.tls.ca"]);
  });

  test("an enum value outside its choices", () => {
    const [p] = problems("source", "syslog", { protocol: "rfc9999" });
    expect(p).toEqual({ path: "config.protocol", message: "must be one of 'rfc5424', 'rfc3164'" });
  });

  test("an item of a list", () => {
    expect(paths(problems("source", "prometheus", { targets: ["localhost:9100", "nohost"] }))).toEqual(["config.targets[1]"]);
    expect(paths(problems("source", "hostmetrics", { scrapers: ["cpu", "gpu"] }))).toEqual(["config.scrapers[1]"]);
  });

  test("a zero interval and a bad header name", () => {
    expect(paths(problems("source", "hostmetrics", { collection_interval: "0s" }))).toEqual(["config.collection_interval"]);
    expect(paths(problems("destination", "otlphttp", { endpoint: "http://x", headers: { "bad header": "v" } }))).toEqual(["config.headers.bad header"]);
  });

  test("gRPC metadata is stricter than HTTP headers: names of 0-9a-z-_. and printable ASCII values (grpc-go ValidateMD)", () => {
    const grpc = (headers: Record<string, string>) => paths(problems("destination", "otlp", { endpoint: "gw:4317", headers }));
    const good = { "X-Team": "a b", authorization: "Bearer abc" };
    expect(validateComponentConfig("destination", "otlp", { endpoint: "gw:4317", headers: good }).headers).toEqual(good);
    expect(grpc({ "X!Team": "v" })).toEqual(["config.headers.X!Team"]);
    expect(grpc({ "X-Team": "caf\u00e9" })).toEqual(["config.headers.X-Team"]);
    expect(grpc({ "X-Team": "a\tb" })).toEqual(["config.headers.X-Team"]);
    // The same names and values are valid HTTP headers.
    const http = { "X!Team": "caf\u00e9", Y: "a\tb" };
    expect(validateComponentConfig("destination", "otlphttp", { endpoint: "http://x", headers: http }).headers).toEqual(http);
  });

  test("under the root the caller gives", () => {
    expect(paths(problems("processor", "batch", { timeout: "soon" }, "topology.nodes[1].processor.config"))).toEqual([
      "topology.nodes[1].processor.config.timeout",
    ]);
  });

  test("an unknown type names `type`", () => {
    expect(problems("source", "kinesis", {})).toEqual([{ path: "type", message: "is not a source type of the catalog" }]);
  });

  test("the message of the error names the first problem", () => {
    expect(() => validateComponentConfig("destination", "otlphttp", {})).toThrow("The otlphttp destination config is not valid: config.endpoint:");
  });
});

describe("characters no collector can read", () => {
  /** Each refused with its code point named, wherever it sits in a string. */
  const refusedCharacters: [string, string][] = [
    ["\u2028", "U+2028 (a line separator)"],
    ["\u2029", "U+2029 (a paragraph separator)"],
    ["\u0085", "U+0085 (a control character)"],
    ["\u007f", "U+007F (a control character)"],
    ["\u009b", "U+009B (a control character)"],
    ["\u0000", "U+0000 (a control character)"],
    ["\u001b", "U+001B (a control character)"],
    ["\r", "U+000D (a control character)"],
    ["\ufeff", "U+FEFF (a byte order mark)"],
    ["\ufffe", "U+FFFE (a noncharacter)"],
    ["\ud800", "U+D800 (a lone surrogate)"],
    ["\udfff", "U+DFFF (a lone surrogate)"],
  ];

  test("are refused in any string value, naming the key and the character", () => {
    for (const [c, named] of refusedCharacters) {
      for (const text of [`/var/log/${c}.log`, `/x${c}`, `/${c}${c}`]) {
        const [p, ...rest] = problems("source", "filelog", { include: ["/ok.log", text] });
        expect(rest).toEqual([]);
        expect(p!.path).toBe("config.include[1]");
        expect(p!.message).toContain(named);
      }
    }
  });

  test("are refused in keys and in values of every type's config, under the root given", () => {
    const [header] = problems("destination", "otlphttp", { endpoint: "http://gw:4318", headers: { X: "ok\u2028" } }, "configOverrides");
    expect(header!.path).toBe("configOverrides.headers.X");
    const [action] = problems("processor", "attributes", { actions: [{ key: "env\u0085", action: "upsert", value: "x" }] });
    expect(action).toEqual({ path: "config.actions[0].key", message: expect.stringContaining("U+0085") });
    const [value] = problems("processor", "resource", { attributes: [{ key: "env", action: "upsert", value: "\ufeffprod" }] });
    expect(value!.path).toBe("config.attributes[0].value");
    const [condition] = problems("processor", "filter", { logs: { log_record: ['body == "a\u2029"'] } });
    expect(condition!.path).toBe("config.logs.log_record[0]");
  });

  test("tab and line feed are allowed: OTTL takes them as whitespace", () => {
    expect(validateComponentConfig("processor", "filter", { logs: { log_record: ['attributes["a"] ==\n\t"b\tc"'] } })).toMatchObject({
      logs: { log_record: ['attributes["a"] ==\n\t"b\tc"'] },
    });
    expect(validateComponentConfig("source", "filelog", { include: ["/var/log/tab\tname.log"] }).include).toEqual(["/var/log/tab\tname.log"]);
  });

  test("printable text of any script, emoji (surrogate pairs) and non-breaking spaces are allowed", () => {
    const text = "/var/log/日本語/😀/👩‍👩‍👧/é\u00a0\u200b\u{10ffff}.log";
    expect(validateComponentConfig("source", "filelog", { include: [text] }).include).toEqual([text]);
  });

  test("every key and string of a nested value is checked, a bad key named with the character escaped", () => {
    expect(unwritableText({ a: ["ok", { "b\u2028c": "x", d: "\u0000" }], e: 1, f: true, g: null }, "config")).toEqual([
      { path: "config.a[1].b\\u2028c", message: expect.stringContaining("is a key containing U+2028") },
      { path: "config.a[1].d", message: expect.stringContaining("U+0000") },
    ]);
    expect(unwritableText({ 日本: ["\t\n😀"] }, "config")).toEqual([]);
  });
});

describe("headers (RFC 9110)", () => {
  const headers = (h: unknown) => problems("destination", "otlp", { endpoint: "gw:4317", headers: h });

  test("a value with CR, LF, NUL or another control is refused naming the header", () => {
    for (const value of ["a\r\nInjected: 1", "a\nb", "a\rb", "a\u0000b", "a\u0001b", "a\u007fb"]) {
      const [p, ...rest] = headers({ Authorization: "Bearer x", "X-Team": value });
      expect(rest).toEqual([]);
      expect(p!.path).toBe("config.headers.X-Team");
      expect(p!.message).toMatch(/header value/);
    }
  });

  test("leading or trailing whitespace is refused; inner spaces and tabs, obs-text and an empty value are not", () => {
    for (const value of [" x", "x ", "\tx", "x\t"]) expect(headers({ A: value })[0]!.path).toBe("config.headers.A");
    const ok = { A: "Bearer a\tb  c", B: "é😀", C: "", D: "!~" };
    expect(validateComponentConfig("destination", "otlphttp", { endpoint: "http://gw:4318", headers: ok }).headers).toEqual(ok);
  });

  test("a name that is not a token is refused naming it", () => {
    for (const name of ["X Team", "X:Team", "X\u2028", "", "X(1)", "é"]) {
      const [p] = headers({ [name]: "v" });
      expect(p!.path).toBe(`config.headers.${name}`.replace(/\.$/, "."));
      expect(p!.message).toMatch(/header names/);
    }
  });
});

describe("sensitive fields (header values) in each of their forms", () => {
  const SECRET_ID = "0190a8c2-7b3e-7c41-9d2e-5f6a7b8c9d01";
  const otlphttp = (headers: unknown) => ({ endpoint: "http://gw:4318", headers });

  test("a plaintext, a stored secret, a host environment value and a value marked not secret are returned as given", () => {
    const headers = {
      Authorization: "Bearer new-token",
      "X-Key": { secret: SECRET_ID },
      "X-Host": { env: "API_KEY_2" },
      "X-Tenant": { value: "team$blue", secret: false },
    };
    expect(validateComponentConfig("destination", "otlphttp", otlphttp(headers)).headers).toEqual(headers);
    expect(validateComponentConfig("destination", "otlp", { endpoint: "gw:4317", headers }, "configOverrides").headers).toEqual(headers);
  });

  test("a plaintext is checked against the field's schema, with its message and path, and never quoted", () => {
    const [p, ...rest] = problems("destination", "otlphttp", otlphttp({ Authorization: "Bearer hunter2\r\nX-Injected: 1" }));
    expect(rest).toEqual([]);
    expect(p!.path).toBe("config.headers.Authorization");
    expect(p!.message).toMatch(/^must be a header value/);
    let message = "";
    try {
      validateComponentConfig("destination", "otlphttp", otlphttp({ Authorization: "Bearer hunter2\r\nX-Injected: 1" }));
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toContain("config.headers.Authorization");
    expect(message).not.toContain("hunter2");
    // gRPC metadata rules apply to a plaintext set on an OTLP/gRPC destination.
    expect(paths(problems("destination", "otlp", { endpoint: "gw:4317", headers: { A: "caf\u00e9" } }))).toEqual(["config.headers.A"]);
  });

  test("a value marked not secret is checked against the field's schema too", () => {
    const [p] = problems("destination", "otlp", { endpoint: "gw:4317", headers: { "X-Team": { value: "caf\u00e9", secret: false } } });
    expect(p).toEqual({ path: "config.headers.X-Team", message: expect.stringMatching(/^must be a header value/) });
    expect(paths(problems("destination", "otlphttp", otlphttp({ A: { value: " x", secret: false } })))).toEqual(["config.headers.A"]);
  });

  test("an environment variable name the collector's env provider refuses is named with the path", () => {
    for (const env of ["1TOKEN", "MY-TOKEN", "", "A B", "${X}", "A:B"]) {
      expect(problems("destination", "otlphttp", otlphttp({ Authorization: { env } }), "configOverrides")).toEqual([
        { path: "configOverrides.headers.Authorization", message: expect.stringContaining("must name an environment variable") },
      ]);
    }
    for (const env of ["TOKEN", "_x", "a1_B2"]) expect(() => validateComponentConfig("destination", "otlphttp", otlphttp({ A: { env } }))).not.toThrow();
  });

  test("anything else at a sensitive field is refused naming the path and the forms", () => {
    const others: unknown[] = [
      { secret: "not-an-id" },
      { secret: "0190a8c2-7b3e-4c41-9d2e-5f6a7b8c9d01" }, // a UUIDv4: ids are v7
      { secret: true, set: true, updatedAt: "2024-06-01T00:00:00.000Z" }, // a read's summary: the write path resolves it first
      { env: "TOKEN", secret: false },
      { value: "x", secret: true },
      { value: 5, secret: false },
      { secret: SECRET_ID, env: "TOKEN" },
      5,
      true,
      null,
      ["a"],
      {},
    ];
    for (const value of others) {
      expect(problems("destination", "otlphttp", otlphttp({ Authorization: value }))).toEqual([
        { path: "config.headers.Authorization", message: "must be a string, {secret: <id>}, {env: NAME} or {value, secret: false}" },
      ]);
    }
  });

  test("problems elsewhere and at sensitive fields are all reported", () => {
    const details = problems("destination", "otlphttp", { endpoint: "nope", headers: { A: { env: "1" }, B: 5, "bad name": "v" } });
    expect(paths(details).sort()).toEqual(["config.endpoint", "config.headers.A", "config.headers.B", "config.headers.bad name"]);
  });

  test("a field that does not allow it cannot be marked not secret; a value of the right form passes", () => {
    const schema = Type.Object(
      { password: Sensitive(Type.String({ minLength: 8, errorMessage: "must be 8 characters or more" })) },
      { additionalProperties: false },
    );
    const check = (config: unknown) => validateConfig(schema, config, "test config", "config");
    expect(() => check({ password: { value: "long enough", secret: false } })).toThrow("config.password: is a credential and cannot be marked as not secret");
    expect(() => check({ password: "short" })).toThrow("config.password: must be 8 characters or more");
    expect(() => check({})).toThrow("config.password:");
    expect(check({ password: { secret: SECRET_ID } })).toEqual({ password: { secret: SECRET_ID } });
    expect(() => check({ password: 5 })).toThrow("config.password: must be a string, {secret: <id>} or {env: NAME}.");
  });
});

describe("text reserved for redacted secrets", () => {
  test("a string holding '<secret:' is refused wherever it is, a sensitive field's plaintext included", () => {
    const reserved = "contains '<secret:', which is reserved for redacted secrets";
    const marker = "<secret:0190a8c2-7b3e-7c41-9d2e-5f6a7b8c9d01>";
    expect(problems("destination", "otlphttp", { endpoint: `http://gw:4318/${marker}` })).toEqual([{ path: "config.endpoint", message: reserved }]);
    expect(problems("destination", "otlphttp", { endpoint: "http://gw:4318", headers: { A: marker } })).toEqual([
      { path: "config.headers.A", message: reserved },
    ]);
    expect(problems("destination", "otlphttp", { endpoint: "http://gw:4318", headers: { A: { value: `x ${marker}`, secret: false } } })).toEqual([
      { path: "config.headers.A.value", message: reserved },
    ]);
    expect(problems("processor", "filter", { logs: { log_record: ['body == "<secret:"'] } })).toEqual([
      { path: "config.logs.log_record[0]", message: reserved },
    ]);
    expect(unwritableText({ a: { "x<secret:y": 1 } }, "config")).toEqual([
      { path: "config.a.x<secret:y", message: "is a key containing '<secret:', which is reserved for redacted secrets" },
    ]);
    // Only the exact prefix is reserved.
    expect(() => validateComponentConfig("destination", "otlphttp", { endpoint: "http://gw:4318", headers: { A: "<Secret: x>", B: "secret:" } })).not.toThrow();
  });
});
