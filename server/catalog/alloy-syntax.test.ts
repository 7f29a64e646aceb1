import { describe, expect, test } from "bun:test";
import { attr, block, encodeAlloy, isAlloyIdentifier, quoteAlloy, raw, ref, withComments } from "./alloy-syntax.ts";

describe("quoteAlloy", () => {
  test("escapes quotes, backslashes and control characters with Go-compatible escapes", () => {
    expect(quoteAlloy('a "b" \\c')).toBe(String.raw`"a \"b\" \\c"`);
    expect(quoteAlloy("line\nnext\ttab\u0001")).toBe(String.raw`"line\nnext\ttab\u0001"`);
    expect(quoteAlloy("ünïcode ✓")).toBe('"ünïcode ✓"');
  });

  test("replaces a lone surrogate, which Alloy cannot unquote", () => {
    expect(quoteAlloy("x\ud800y")).toBe('"x\ufffdy"');
  });
});

describe("strings the catalog accepts are written so Alloy reads them back", () => {
  // Accepted by the catalog's character rule (validate.ts): printable text, tab and line feed.
  const accepted = ["a\tb", "line\nnext", 'q"uo\\te', "`tick`", "${env:X}", "日本語 😀 👩‍👩‍👧", "\u00a0\u200b", "\u{10ffff}", ""];

  test("quoted: one line, only escapes Go unquotes, the same text back", () => {
    for (const text of accepted) {
      const quoted = quoteAlloy(text);
      expect(quoted).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\ufeff]/);
      expect(JSON.parse(quoted)).toBe(text);
    }
  });

  test("raw strings fall back to quoting for a tab, a line feed or a backtick", () => {
    for (const text of accepted) {
      const line = encodeAlloy([block("x", "y", [attr("v", raw(text))])]).split("\n")[1]!;
      const value = line.slice(line.indexOf("= ") + 2);
      if (value.startsWith("`")) expect(value).toBe(`\`${text}\``);
      else expect(JSON.parse(value)).toBe(text);
      expect(value).not.toMatch(/[\t\n]/);
    }
  });
});

test("a raw string holding an attribute reference is quoted, so the value filled in is quoted too (render/attributes.ts)", () => {
  const text = 'set(attributes["dc"], "{{attr \\"dc\\"}}")';
  const line = encodeAlloy([block("x", "y", [attr("v", raw(text))])]).split("\n")[1]!;
  expect(line).toBe("\t" + String.raw`v = "set(attributes[\"dc\"], \"{{attr \\\"dc\\\"}}\")"`);
  expect(JSON.parse(line.slice(line.indexOf("= ") + 2))).toBe(text);
});

describe("isAlloyIdentifier", () => {
  test("letters, digits and _, not starting with a digit, not a keyword", () => {
    expect(isAlloyIdentifier("web_logs_2")).toBe(true);
    expect(isAlloyIdentifier("_x")).toBe(true);
    expect(isAlloyIdentifier("2x")).toBe(false);
    expect(isAlloyIdentifier("a-b")).toBe(false);
    expect(isAlloyIdentifier("null")).toBe(false);
    expect(isAlloyIdentifier("")).toBe(false);
  });
});

describe("encodeAlloy", () => {
  test("writes blocks with tabs, aligned attributes and blank lines around nested blocks", () => {
    const text = encodeAlloy(
      [
        withComments(
          block("otelcol.exporter.otlp", "gw", [
            block("client", undefined, [attr("endpoint", "gw:4317"), attr("headers", { b: "2", a: "1" }), block("tls", undefined, [attr("insecure", true)])]),
          ]),
          ["the gateway"],
        ),
        block("otelcol.receiver.otlp", "in", [block("grpc", undefined, []), false, undefined]),
      ],
      ["header"],
    );
    expect(text).toBe(
      [
        "// header",
        "",
        "// the gateway",
        'otelcol.exporter.otlp "gw" {',
        "\tclient {",
        '\t\tendpoint = "gw:4317"',
        '\t\theaders  = {"a" = "1", "b" = "2"}',
        "",
        "\t\ttls {",
        "\t\t\tinsecure = true",
        "\t\t}",
        "\t}",
        "}",
        "",
        'otelcol.receiver.otlp "in" {',
        "\tgrpc {}",
        "}",
        "",
      ].join("\n"),
    );
  });

  test("writes long lists one item per line with trailing commas, references bare", () => {
    const targets = ["first", "second", "third"].map((l) => ref(`otelcol.processor.batch.${l}_with_a_long_name.input`));
    const text = encodeAlloy([block("output", undefined, [attr("logs", targets), attr("traces", [])])]);
    expect(text).toContain("\tlogs   = [\n\t\totelcol.processor.batch.first_with_a_long_name.input,\n");
    expect(text).toContain("\ttraces = []");
  });

  test("writes OTTL as raw strings when it can, quoted otherwise", () => {
    const text = encodeAlloy([block("logs", undefined, [attr("log_record", [raw('IsMatch(body, "a\\.b")'), raw("has `tick`"), raw("two\nlines")])])]);
    expect(text).toContain('`IsMatch(body, "a\\.b")`');
    expect(text).toContain('"has `tick`"');
    expect(text).toContain('"two\\nlines"');
  });

  test("numbers, booleans and null", () => {
    expect(encodeAlloy([block("b", undefined, [attr("n", 8192), attr("f", 0.5), attr("t", false), attr("z", null)])])).toBe(
      "b {\n\tn = 8192\n\tf = 0.5\n\tt = false\n\tz = null\n}\n",
    );
    expect(() => encodeAlloy([block("b", undefined, [attr("n", Number.NaN)])])).toThrow();
    expect(() => encodeAlloy([block("b", undefined, [attr("n", 2 ** 53)])])).toThrow();
    expect(encodeAlloy([block("b", undefined, [attr("f", 1.5e-7), attr("i", -(2 ** 53 - 1))])])).toBe("b {\n\tf = 1.5e-7\n\ti = -9007199254740991\n}\n");
  });

  test("refuses a label that is not an identifier", () => {
    expect(() => encodeAlloy([block("otelcol.exporter.debug", "not-valid", [])])).toThrow();
  });

  test("an empty file is empty", () => {
    expect(encodeAlloy([])).toBe("");
  });
});
