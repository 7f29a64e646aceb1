import { expect, test } from "bun:test";
import { Type } from "@sinclair/typebox";
import { ValidationError } from "../errors.ts";
import { attributeTemplate, fillTemplate } from "./attributes.ts";

const field = (text: string, path = "destinations[gw].config.endpoint") => ({ path, text, schema: Type.String() });

function failure(run: () => unknown) {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).details[0]!;
  }
  throw new Error("no error");
}

test("a body without references needs no template", () => {
  expect(attributeTemplate("otelcol", 'a: "b"\n', [])).toBeNull();
});

test("each reference is filled in quoted for how deep it sits: once in a string, twice in an OTTL literal in a string", () => {
  const body = String.raw`a: "x {{attr \"k\"}} y"` + "\n" + String.raw`b: "set(v, \"{{attr \\\"k\\\"}}\")"` + "\n";
  const template = attributeTemplate("otelcol", body, [field('x {{attr "k"}} y')])!;
  expect(template.keys).toEqual(["k"]);
  const filled = fillTemplate(template, "c1", { k: 'q"$' });
  expect(filled).toBe(String.raw`a: "x q\"$$ y"` + "\n" + String.raw`b: "set(v, \"q\\\"$$\")"` + "\n");
  // Alloy doubles no `$`.
  expect(fillTemplate(attributeTemplate("alloy", body, [])!, "c1", { k: 'q"$' })).toContain(String.raw`"x q\"$ y"`);
});

test("a reference a rendering rewrote is refused, naming the field, rather than delivered half filled", () => {
  const mangled = failure(() => attributeTemplate("otelcol", String.raw`a: "{{attr \"k\"}}"` + '\nb: "{{attr-k}}"\n', [field('{{attr "k"}}')]));
  expect(mangled.message).toContain("rewrote");
  const escaped = failure(() => attributeTemplate("otelcol", String.raw`a: "{{attr \\"k\\"}}"`, [field('{{attr "k"}}', "sources[s].config.x")]));
  expect(escaped.path).toBe("sources[s].config.x");
});

test("only a collector's own attributes count: a key Object's prototype has is missing like any other", () => {
  const template = attributeTemplate("otelcol", String.raw`a: "{{attr \"constructor\"}}{{attr \"__proto__\"}}"`, [
    field('{{attr "constructor"}}{{attr "__proto__"}}'),
  ])!;
  expect(failure(() => fillTemplate(template, "c1", {})).path).toBe("attributes.__proto__");
  expect(failure(() => fillTemplate(template, "c1", { __proto__: "p" } as never)).path).toBe("attributes.__proto__");
  expect(fillTemplate(template, "c1", JSON.parse('{"constructor": "c", "__proto__": "p"}'))).toBe('a: "cp"');
});
