import { expect, test } from "bun:test";
import { plaintextRedactor, spellings } from "./redact.ts";
import { secretMarker } from "../secrets/values.ts";

test("every spelling of a plaintext becomes its marker, the longest first", () => {
  const id = Bun.randomUUIDv7();
  const plaintext = `it's $a"b é`;
  const text = `raw: it's $a"b é\njson: "it's $a\\"b é"\nsingle: 'it''s $a"b é'\nescaped: "it's $$a\\"b é"\n`;
  const m = secretMarker(id);
  expect(plaintextRedactor([[plaintext, id]])(text)).toBe(`raw: ${m}\njson: "${m}"\nsingle: '${m}'\nescaped: "${m}"\n`);
  expect(spellings(plaintext)).toContain(`it's $$a\\"b é`);
});

test("markers already in a text stay whole, so redacting twice changes nothing", () => {
  const a = Bun.randomUUIDv7();
  const b = Bun.randomUUIDv7();
  // Plaintexts that are parts of a marker: found in free text, never inside a marker.
  const redact = plaintextRedactor([
    ["hunter2", a],
    ["secret", b],
    [a.slice(0, 8), b],
  ]);
  const once = redact(`password: hunter2\nnote: secret\n`);
  expect(once).toBe(`password: ${secretMarker(a)}\nnote: ${secretMarker(b)}\n`);
  expect(redact(once)).toBe(once);
  expect(plaintextRedactor([])("hunter2")).toBe("hunter2");
});
