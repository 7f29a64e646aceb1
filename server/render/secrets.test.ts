/**
 * Delivery puts each secret where its marker is, quoted as the runtime's
 * writer quotes a string: the delivered config is byte for byte the one the
 * renderer writes for the same value kept as plain text. (Alloy's encoder
 * writes a short map on one line, decided on the redacted text, so the case
 * used has a header map long enough to be written one entry per line.)
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { Document, Scalar } from "yaml";
import { unwritableCharacter, validateComponentConfig } from "../catalog/validate.ts";
import { ValidationError } from "../errors.ts";
import { markedSecrets } from "../secrets/values.ts";
import { renderAlloy } from "./alloy.ts";
import { renderOtelcol } from "./otelcol.ts";
import { deliverable, quotedSecret } from "./secrets.ts";
import { loadCase, toInput } from "./testdata/load.ts";

const RENDER = { otelcol: renderOtelcol, alloy: renderAlloy } as const;
const BACKEND = "0190a8c2-7b3e-7c41-9d2e-5f6a7b8c9d11";

/** The `secrets` case with the backend's Authorization set to `value` (any stored form). */
function withAuthorization(value: unknown) {
  const raw = structuredClone(loadCase("secrets").raw);
  const backend = raw.destinations.find((d) => d.id === "dst-backend")!;
  backend.config = { ...backend.config, headers: { ...(backend.config.headers as object), Authorization: value } };
  return toInput(raw);
}

function isHeaderValue(text: string): boolean {
  try {
    validateComponentConfig("destination", "otlphttp", { endpoint: "http://x", headers: { A: text } });
    return true;
  } catch (error) {
    if (error instanceof ValidationError) return false;
    throw error;
  }
}

/** Header values with every character a writer may escape: quotes, backslashes, `$`, `${…}`, tabs, non-ASCII. */
const plaintexts = fc
  .oneof(
    fc.constantFrom("Bearer abc", 'a"b', "a\\b", "pa$word", "${env:X}", "$$", "a\tb", "é😀", "<<", "'", "#x", "~", "true", "0x1F", "`x`"),
    fc.string({ unit: fc.constantFrom(..."ab$\\\"'{}:#\t é😀`".split("")), minLength: 1, maxLength: 20 }),
    fc.string({ unit: "grapheme", minLength: 1, maxLength: 12 }),
  )
  .filter(isHeaderValue);

describe("delivery puts each secret in as the writer would have written it", () => {
  for (const runtime of ["otelcol", "alloy"] as const) {
    test(`${runtime}: delivered bytes = the rendering with the value as plain text`, async () => {
      const redacted = RENDER[runtime](withAuthorization({ secret: BACKEND }));
      await fc.assert(
        fc.asyncProperty(plaintexts, async (plaintext) => {
          const opened: string[] = [];
          const delivered = await deliverable(runtime, redacted, async (id) => {
            opened.push(id);
            return id === BACKEND ? plaintext : `other ${id}`;
          });
          const plain = RENDER[runtime](withAuthorization({ value: plaintext, secret: false }));
          // The other secrets of the case stay as in the plain rendering: put them in the same way.
          expect(delivered).toBe(await deliverable(runtime, plain, async (id) => `other ${id}`));
          expect(opened.sort()).toEqual(markedSecrets(redacted).sort());
        }),
        { numRuns: 150, seed: Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31) },
      );
    });
  }

  test("each secret is opened once however often it is marked, and a body without markers is returned as it is", async () => {
    const body = `a: "<secret:${BACKEND}>"\nb: "<secret:${BACKEND}>"\n`;
    let opened = 0;
    const out = await deliverable("otelcol", body, async () => {
      opened += 1;
      return "t$";
    });
    expect(out).toBe('a: "t$$"\nb: "t$$"\n');
    expect(opened).toBe(1);
    const plain = renderOtelcol(loadCase("metrics").input!);
    expect(
      await deliverable("otelcol", plain, async () => {
        throw new Error("nothing to open");
      }),
    ).toBe(plain);
  });

  test("quoting per runtime: the collector's `$$` escape in YAML, Go quoting in Alloy", () => {
    expect(quotedSecret("otelcol", 'Bearer "a"\\${env:X}')).toBe('"Bearer \\"a\\"\\\\$${env:X}"');
    expect(quotedSecret("alloy", 'Bearer "a"\\${env:X}')).toBe('"Bearer \\"a\\"\\\\${env:X}"');
    expect(quotedSecret("otelcol", "é\t😀")).toBe('"é\\t😀"');
  });

  test("Runtime O's quick quoting of text the catalog accepts is the YAML writer's, byte for byte", () => {
    const writer = (text: string) => {
      const doc = new Document(text.replaceAll("$", () => "$$"));
      (doc.contents as Scalar).type = Scalar.QUOTE_DOUBLE;
      return doc.toString({ lineWidth: 0, doubleQuotedAsJSON: true }).trimEnd();
    };
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (text) => {
        if (unwritableCharacter(text) === undefined) expect(quotedSecret("otelcol", text)).toBe(writer(text));
      }),
      { numRuns: 2000 },
    );
    for (const text of ["$", "\\", '"', "\u0000x", "\u0085", "\u2028", "\ufeff"]) expect(quotedSecret("otelcol", text)).toBe(writer(text));
  });
});
