import { describe, expect, test } from "bun:test";
import { isScalar, parseDocument, Scalar, visit } from "yaml";
import { unwritableCharacter } from "../catalog/validate.ts";
import { renderOtelcol } from "./otelcol.ts";
import { renderPipelinePreview } from "./preview.ts";
import { loadCase } from "./testdata/load.ts";

/** A header value marked as not secret, which renders as its text. */
const plain = (value: string) => ({ value, secret: false });

/** Every scalar of a rendered document: whether it is a key, its value and how it is written. */
function scalars(text: string): { key: boolean; value: unknown; type: string | undefined }[] {
  const found: { key: boolean; value: unknown; type: string | undefined }[] = [];
  visit(parseDocument(text), {
    Scalar(key, node) {
      found.push({ key: key === "key", value: node.value, type: node.type });
    },
  });
  return found;
}

describe("scalars are written so yaml.v3 cannot read another type", () => {
  const c = loadCase("overrides");
  const input = c.input!;
  const tricky = ["2023-06-01", "0b101", "1_000", "~", "yes", "true", ".inf", "0x1F", "null", "12"];
  const destination = input.destinations.get("dst-gw")!;
  // The gateway is an OTLP/gRPC destination, whose header names are gRPC metadata keys: `~` is a value only.
  const names = tricky.filter((t) => t !== "~");
  const withTricky = {
    ...input,
    destinations: new Map([
      [
        "dst-gw",
        { ...destination, config: { ...destination.config, headers: Object.fromEntries(names.map((t, i) => [t, plain(tricky[(i + 1) % tricky.length]!)])) } },
      ],
    ]),
    activations: { ...input.activations, destinations: input.activations.destinations.map((d) => ({ ...d, configOverrides: { tls: { insecure: true } } })) },
  };
  const text = renderOtelcol(withTricky);

  test("every string value is double-quoted; numbers and booleans are plain", () => {
    const values = scalars(text).filter((s) => !s.key);
    expect(values.length).toBeGreaterThan(10);
    for (const s of values)
      expect({ value: s.value, type: s.type }).toEqual({ value: s.value, type: typeof s.value === "string" ? Scalar.QUOTE_DOUBLE : Scalar.PLAIN });
    expect(text).toContain('"0b101"');
    expect(text).toContain("insecure: true");
  });

  test("a key stays plain only when it is an identifier yaml.v3 reads as a string", () => {
    const keys = scalars(text).filter((s) => s.key);
    for (const s of keys) {
      const plain = /^[A-Za-z_][A-Za-z0-9_./-]*$/.test(String(s.value)) && !["true", "yes", "null"].includes(String(s.value));
      expect({ key: s.value, type: s.type }).toEqual({ key: s.value, type: plain ? Scalar.PLAIN : Scalar.QUOTE_DOUBLE });
    }
    for (const t of names) expect(text).toContain(`${JSON.stringify(t)}: `);
    expect(text).toContain(': "~"');
    expect(text).toContain("otlp/gateway:");
  });

  test("strings are one JSON-escaped line each, whatever they hold", () => {
    // An HTTP destination: its header values may hold tabs and non-ASCII text, which gRPC metadata may not.
    const http = { ...destination, type: "otlphttp", config: { endpoint: "http://gateway:4318", headers: { X: plain('a\tb é 😀 \\ "q"') } } };
    const multi = {
      ...input,
      destinations: new Map([["dst-gw", http]]),
      activations: { ...input.activations, destinations: input.activations.destinations.map((d) => ({ ...d, configOverrides: {} })) },
    };
    const out = renderOtelcol(multi);
    expect(out).toContain(`X: ${JSON.stringify('a\tb é 😀 \\ "q"')}`);
    const doc = parseDocument(out);
    expect(isScalar(doc.getIn(["exporters", "otlphttp/gateway", "headers", "X"], true))).toBe(true);
  });
});

describe("text outside catalog validation reaches the output only as identifiers", () => {
  test("record names and pipeline names with line separators, controls and a BOM become component names", () => {
    const c = loadCase("overrides");
    const input = c.input!;
    const bad = "App\u2028files\u0085\ufeff\u0000\n# injected: x";
    const renamed = {
      ...input,
      sources: new Map([...input.sources].map(([id, s]) => [id, { ...s, name: bad }])),
      destinations: new Map([...input.destinations].map(([id, d]) => [id, { ...d, name: bad }])),
      pipelines: new Map([...input.pipelines].map(([id, p]) => [id, { ...p, name: bad }])),
    };
    const text = renderOtelcol(renamed);
    expect(unwritableCharacter(text)).toBeUndefined();
    expect(text).not.toMatch(/^\s*#? ?injected/m);
    expect(text).toContain("filelog/app_files_injected_x:");
    // Preview comments name node ids, which the API restricts to [A-Za-z0-9_.-] (config-schemas.ts NodeId).
    const preview = loadCase("preview").preview!;
    expect(unwritableCharacter(renderPipelinePreview(preview.pipeline, preview.sources, preview.destinations, "otelcol"))).toBeUndefined();
  });
});
