/**
 * Rendered otelcol YAML read by a real YAML parser: Go's gopkg.in/yaml.v3,
 * decoding into `any` as the collector's confmap does (test/yamlv3/main.go).
 * Every golden, and rendered configs full of strings YAML likes to read as
 * something else, must decode with every string still a string of the same
 * value (with `$` written `$$`, the collector's escape) and every number and
 * boolean of its own type.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { parse } from "yaml";
import { validateComponentConfig } from "../../server/catalog/validate.ts";
import { ValidationError } from "../../server/errors.ts";
import { escapeDollars, renderOtelcol } from "../../server/render/otelcol.ts";
import { deliverable } from "../../server/render/secrets.ts";
import { secretMarker } from "../../server/secrets/values.ts";
import { TESTDATA, toInput } from "../../server/render/testdata/load.ts";
import { decodeYamlV3, type GoValue } from "./yamlv3.ts";

/**
 * Where `go` differs from `intended`, strictly by type, or undefined. A number
 * JavaScript writes as an integer within int64 must be a Go int, any other
 * (a fraction, or written with an exponent such as 1e+95) a float64.
 */
function difference(go: GoValue, intended: unknown, at = "(root)"): string | undefined {
  const got = `${go.type} ${JSON.stringify(go.value)}`;
  if (typeof intended === "string")
    return go.type === "string" && go.value === intended ? undefined : `${at}: ${got}, expected the string ${JSON.stringify(intended)}`;
  if (typeof intended === "boolean") return go.type === "bool" && go.value === intended ? undefined : `${at}: ${got}, expected ${intended}`;
  if (typeof intended === "number") {
    const type = /^-?\d+$/.test(String(intended)) && Math.abs(intended) < 2 ** 63 ? "int" : "float64";
    return go.type === type && Number(go.value) === intended ? undefined : `${at}: ${got}, expected the ${type} ${intended}`;
  }
  if (Array.isArray(intended)) {
    if (go.type !== "[]interface {}") return `${at}: ${got}, expected a list`;
    const items = go.value as GoValue[];
    if (items.length !== intended.length) return `${at}: ${items.length} items, expected ${intended.length}`;
    for (let i = 0; i < items.length; i++) {
      const d = difference(items[i]!, intended[i], `${at}[${i}]`);
      if (d) return d;
    }
    return undefined;
  }
  if (typeof intended === "object" && intended !== null) {
    if (go.type !== "map[string]interface {}") return `${at}: ${got}, expected a map with string keys`;
    const entries = go.value as { key: GoValue; value: GoValue }[];
    const keys = Object.keys(intended);
    if (entries.length !== keys.length) return `${at}: keys ${JSON.stringify(entries.map((e) => e.key.value))}, expected ${JSON.stringify(keys)}`;
    for (const e of entries) {
      const key = e.key.value as string;
      if (!Object.hasOwn(intended, key)) return `${at}: unexpected key ${JSON.stringify(key)}`;
      const d = difference(e.value, (intended as Record<string, unknown>)[key], `${at}.${key}`);
      if (d) return d;
    }
    return undefined;
  }
  return `${at}: ${got}, expected ${JSON.stringify(intended)}`;
}

/** Every string value and key under a decoded value. */
function strings(go: GoValue, into = new Set<string>()): Set<string> {
  if (go.type === "string") into.add(go.value as string);
  else if (go.type === "[]interface {}") for (const item of go.value as GoValue[]) strings(item, into);
  else if (go.type.startsWith("map[")) {
    for (const e of go.value as { key: GoValue; value: GoValue }[]) {
      strings(e.key, into);
      strings(e.value, into);
    }
  }
  return into;
}

/** Decodes every rendered document in one Go process; each must mean what the JS YAML reading says and what `expected` lists. */
function expectConformant(documents: { text: string; expected: string[] }[]): void {
  const decoded = decodeYamlV3(documents.map((d) => d.text));
  documents.forEach((doc, i) => {
    const result = decoded[i]!;
    const context = `\n--- document ---\n${doc.text}`;
    if (result.error !== undefined) throw new Error(`yaml.v3: ${result.error}${context}`);
    const d = difference(result.value, parse(doc.text));
    if (d) throw new Error(`yaml.v3 reads ${d}${context}`);
    const found = strings(result.value);
    for (const s of doc.expected) if (!found.has(s)) throw new Error(`yaml.v3 did not read the string ${JSON.stringify(s)}${context}`);
  });
}

describe("yaml.v3 reads rendered otelcol YAML as meant", () => {
  test("every golden otelcol.yaml", () => {
    const goldens = readdirSync(TESTDATA, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => ({ text: readFileSync(join(TESTDATA, e.name, "otelcol.yaml"), "utf8"), expected: [] }));
    expect(goldens.length).toBeGreaterThan(0);
    expectConformant(goldens);
  });

  /** Strings YAML, Go or the collector are tempted to read as something else. */
  const tricky = fc.oneof(
    fc.constantFrom(
      "2023-06-01",
      "2023-06-01T10:00:00Z",
      "2001-12-14 21:59:43.10 -5",
      "0b101",
      "0o17",
      "0x1F",
      "017",
      "1_000",
      "+12",
      "-0",
      "1e3",
      "6.02e+23",
      ".inf",
      "-.Inf",
      ".nan",
      "~",
      "null",
      "Null",
      "NULL",
      "",
      "true",
      "False",
      "yes",
      "no",
      "on",
      "off",
      "y",
      "N",
      "<<",
      " leading",
      "trailing ",
      "  ",
      "#",
      "a #b",
      "a: b",
      ": x",
      "- x",
      "-",
      "?",
      "? x",
      "*alias",
      "&anchor",
      "!tag",
      "!!str x",
      "%YAML",
      "---",
      "...",
      "{}",
      "[]",
      "{a: 1}",
      "[1, 2]",
      "'",
      "''",
      '"',
      '\\"',
      "\\",
      "\\n",
      "|",
      ">",
      "@x",
      "`x`",
      ",",
      "$",
      "$$",
      "${env:X}",
      "$${env:X}",
      "${X}",
      "pa$word",
      "\t",
      "a\tb",
      "line\nbreak",
      "ends\n",
      "\n",
      "é",
      "Ω≈ç√",
      "日本語",
      "😀",
      "👩‍👩‍👧",
      "\u00a0",
      "\u200b",
      "x".repeat(5_000),
    ),
    fc.string({ maxLength: 30 }),
    fc.string({ unit: "grapheme", maxLength: 20 }),
    fc.string({ unit: fc.constantFrom(..."0123456789-:_.+eExob~#&*!{}[]'\"\\$ \t\n".split("")), maxLength: 16 }),
    // Any UTF-16 code unit: what the catalog's character rule lets through must decode unchanged.
    fc.string({ unit: "binary", maxLength: 12 }),
  );
  /** The same, as header names: RFC 9110 tokens. */
  const tokens = fc.oneof(
    fc.constantFrom(
      "2023-06-01",
      "0b101",
      "0x1F",
      "1_000",
      "1e3",
      ".inf",
      "~",
      "null",
      "true",
      "yes",
      "Off",
      "<<",
      "#",
      "*a",
      "&a",
      "!a",
      "'",
      "-",
      "$",
      "$x",
      "X-Scope-OrgID",
    ),
    fc.string({ unit: fc.constantFrom(..."aZ09!#$%&'*+-.^_`|~".split("")), minLength: 1, maxLength: 12 }),
  );
  const scalar = fc.oneof({ weight: 3, arbitrary: tricky }, fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean());

  type HeaderValue = { value: string; secret: false } | { env: string } | { secret: string };

  /** A stored header value in each form: not secret (tricky text), from the host's environment, a secret. */
  const headerValue: fc.Arbitrary<HeaderValue> = fc.oneof(
    { weight: 3, arbitrary: tricky.map((value) => ({ value, secret: false as const })) },
    fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,15}$/).map((env) => ({ env })),
    fc.uuid({ version: 7 }).map((secret) => ({ secret })),
  );

  /** The string yaml.v3 must read for a header value: the text (`$` escaped), `${env:NAME}` as it is, a secret's marker. */
  function renderedHeader(value: HeaderValue): string {
    if ("env" in value) return `\${env:${value.env}}`;
    if ("value" in value) return escapeDollars(value.value) as string;
    return secretMarker(value.secret);
  }

  /** One collector: files through attribute actions to an OTLP/HTTP gateway. */
  function collector(source: object, destination: object, attributes: object): string {
    return renderOtelcol(
      toInput({
        collector: { id: "c1", name: "c1" },
        sources: [{ id: "s1", name: "files", type: "filelog", config: source }],
        destinations: [{ id: "d1", name: "gateway", type: "otlphttp", config: destination }],
        pipelines: [
          {
            id: "p1",
            name: "app",
            signal: "logs",
            topology: {
              nodes: [
                { id: "in", kind: "source" },
                { id: "tag", kind: "processor", processor: { type: "attributes", config: attributes } },
                { id: "out", kind: "destination" },
              ],
              edges: [
                { id: "e1", source: "in", target: "tag" },
                { id: "e2", source: "tag", target: "out" },
              ],
            },
          },
        ],
        activations: {
          collectorId: "c1",
          sources: [{ sourceId: "s1", configOverrides: {} }],
          destinations: [{ destinationId: "d1", configOverrides: {}, tags: {} }],
        },
        routes: [{ id: "r1", collectorId: "c1", sourceId: "s1", pipelineId: "p1" }],
      } as never),
    );
  }

  /** Whether the catalog takes `config`. */
  function valid(kind: "source" | "destination" | "processor", type: string, config: unknown): boolean {
    try {
      validateComponentConfig(kind, type, config);
      return true;
    } catch (error) {
      if (error instanceof ValidationError) return false;
      throw error;
    }
  }

  /** A collector config with `values` in a file glob, a header and attribute actions; undefined if validation refuses it. */
  function render(
    glob: string,
    header: [string, HeaderValue],
    key: string,
    value: string | number | boolean,
  ): { text: string; expected: string[] } | undefined {
    const source = { include: [glob.startsWith("/") ? glob : `/${glob}`] };
    const destination = { endpoint: "http://gateway:4318", headers: Object.fromEntries([header]) };
    const attributes = { actions: [{ key, action: "upsert", value }] };
    if (!valid("source", "filelog", source) || !valid("destination", "otlphttp", destination) || !valid("processor", "attributes", attributes))
      return undefined;
    const text = collector(source, destination, attributes);
    // Keys are not expanded by the collector, so a header name keeps its `$`.
    const dollars = (s: string) => escapeDollars(s) as string;
    return {
      text,
      expected: [dollars(source.include[0]!), header[0], renderedHeader(header[1]), dollars(key), ...(typeof value === "string" ? [dollars(value)] : [])],
    };
  }

  test("rendered configs with tricky strings in values and keys", () => {
    const documents: { text: string; expected: string[] }[] = [];
    let refused = 0;
    fc.assert(
      fc.property(tricky, tokens, headerValue, tricky, scalar, (glob, name, value, key, attribute) => {
        const doc = render(glob, [name, value], key === "" ? "k" : key, attribute);
        if (doc) documents.push(doc);
        else refused += 1;
      }),
      { numRuns: 400, seed: Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31) },
    );
    // Most draws are valid configs (header values with edge whitespace and line breaks are refused).
    expect(documents.length).toBeGreaterThan(refused);
    expectConformant(documents);
  });

  test("a delivered secret reads back as its plaintext, `$` written `$$` as the collector unescapes it", async () => {
    const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
    // Plaintexts the catalog takes as header values; each header holds another secret.
    const plaintexts = fc
      .sample(tricky, { numRuns: 400, seed })
      .filter((text) => valid("destination", "otlphttp", { endpoint: "http://x", headers: { H: text } }));
    expect(plaintexts.length).toBeGreaterThan(100);
    const ids = plaintexts.map((_, i) => `0190a8c2-7b3e-7c41-9d2e-${String(i).padStart(12, "0")}`);
    const documents: { text: string; expected: string[] }[] = [];
    for (let at = 0; at < plaintexts.length; at += 25) {
      const headers = Object.fromEntries(ids.slice(at, at + 25).map((secret, i) => [`H${at + i}`, { secret }]));
      const redacted = collector(
        { include: ["/a.log"] },
        { endpoint: "http://gateway:4318", headers },
        { actions: [{ key: "k", action: "upsert", value: "v" }] },
      );
      const text = await deliverable("otelcol", redacted, async (id) => plaintexts[ids.indexOf(id)]!);
      const delivered = (parse(text) as { exporters: Record<string, { headers: Record<string, string> }> }).exporters["otlphttp/gateway"]!.headers;
      for (const name of Object.keys(headers)) expect(delivered[name]).toBe(escapeDollars(plaintexts[Number(name.slice(1))]!) as string);
      documents.push({ text, expected: Object.keys(headers).map((name) => escapeDollars(plaintexts[Number(name.slice(1))]!) as string) });
    }
    // yaml.v3 reads each document as the JavaScript reading above does, each plaintext among its strings.
    expectConformant(documents);
  });
});
