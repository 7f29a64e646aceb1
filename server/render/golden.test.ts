/**
 * Golden files: each `testdata/<case>/input.yaml` renders to the committed
 * `otelcol.yaml` and `config.alloy` beside it. `UPDATE_GOLDEN=1 bun test
 * server/render` rewrites them; review the diff before committing. Every
 * output is also checked structurally, so a golden file cannot bless a
 * config that defines an unused component or references a missing one.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import type { Runtime } from "../../shared/vocabulary.ts";
import { renderAlloy } from "./alloy.ts";
import { renderOtelcol } from "./otelcol.ts";
import { renderPipelinePreview } from "./preview.ts";
import { ValidationError } from "../errors.ts";
import { loadCase, TESTDATA, toInput, type TestCase } from "./testdata/load.ts";

const UPDATE = process.env.UPDATE_GOLDEN === "1";
const CASES = readdirSync(TESTDATA, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

function render(c: TestCase, runtime: Runtime): string {
  if (c.preview) return renderPipelinePreview(c.preview.pipeline, c.preview.sources, c.preview.destinations, runtime);
  return runtime === "alloy" ? renderAlloy(c.input!) : renderOtelcol(c.input!);
}

/** A case whose collector runs a source Alloy cannot run: its Runtime R golden is the refusal (`alloy-refused.txt`). */
const REFUSED_ON_ALLOY = "alloy-refused.txt";

/** The Runtime R render, or the message of the ValidationError that refuses it. */
function renderAlloyOrRefusal(c: TestCase): { refused: boolean; text: string } {
  try {
    return { refused: false, text: render(c, "alloy") };
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    return { refused: true, text: `${error.message}\n` };
  }
}

function golden(name: string, file: string, actual: string): void {
  const path = join(TESTDATA, name, file);
  if (UPDATE) writeFileSync(path, actual);
  if (!existsSync(path)) throw new Error(`${path} is missing; run with UPDATE_GOLDEN=1 to write it.`);
  expect(actual).toBe(readFileSync(path, "utf8"));
}

/** Every component a pipeline names is defined, and every defined component is in some pipeline. */
export function checkOtelcolStructure(text: string): void {
  const config = parse(text) as Record<string, Record<string, unknown>> & {
    service: { pipelines: Record<string, Record<string, string[]>> };
  };
  const pipelines = Object.entries(config.service.pipelines);
  expect(pipelines.length).toBeGreaterThan(0);
  for (const section of ["receivers", "processors", "exporters"] as const) {
    const defined = Object.keys(config[section] ?? {});
    const used = new Set(pipelines.flatMap(([, p]) => p[section] ?? []));
    for (const id of used) expect(defined).toContain(id);
    for (const id of defined) {
      expect(id).toMatch(/^[a-z][a-z0-9_]*(\/[a-z_][a-z0-9_]*)?$/);
      expect(used).toContain(id);
    }
  }
  for (const [name, p] of pipelines) {
    expect(name).toMatch(/^(logs|metrics|traces)\/[a-z0-9_-]+$/);
    expect(p.receivers!.length).toBeGreaterThan(0);
    expect(p.exporters!.length).toBeGreaterThan(0);
  }
}

/** Blocks that only produce data may stand unreferenced; every other block must be someone's target. */
const HEADS = /^(otelcol\.receiver\.(otlp|kafka)|loki\.source\.[a-z_]+|prometheus\.scrape)$/;

/** Every `X.Y.label.export` reference names a defined block, and every block is referenced or a head. */
export function checkAlloyStructure(text: string): void {
  const code = text
    .replace(/^\s*\/\/.*$/gm, "")
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/`[^`]*`/g, "``");
  const defined = [...text.matchAll(/^([a-z][a-z0-9_.]*) "([A-Za-z_][A-Za-z0-9_]*)" \{/gm)].map((m) => `${m[1]}.${m[2]}`);
  expect(new Set(defined).size).toBe(defined.length);
  const referenced = new Set(
    [...code.matchAll(/\b((?:[a-z_]+\.)+[a-z_]+)\.([A-Za-z_][A-Za-z0-9_]*)\.(input|receiver|targets|rules)\b/g)].map((m) => `${m[1]}.${m[2]}`),
  );
  for (const r of referenced) expect(defined).toContain(r);
  for (const d of defined) {
    if (!HEADS.test(d.slice(0, d.lastIndexOf(".")))) expect(referenced).toContain(d);
  }
  // Only a preview's unwired stand-in (said in the header) may leave an output empty.
  if (!/left unwired/.test(text)) expect(code).not.toMatch(/output \{\}/);
  const opens = (code.match(/\{/g) ?? []).length;
  expect((code.match(/\}/g) ?? []).length).toBe(opens);
}

describe("golden files", () => {
  for (const name of CASES) {
    test(`${name}: Runtime O`, () => {
      const text = render(loadCase(name), "otelcol");
      checkOtelcolStructure(text);
      golden(name, "otelcol.yaml", text);
    });
    test(`${name}: Runtime R`, () => {
      const { refused, text } = renderAlloyOrRefusal(loadCase(name));
      // A refusal is blessed only where the case says so, by its committed refusal file.
      if (refused && (UPDATE || existsSync(join(TESTDATA, name, REFUSED_ON_ALLOY)))) return golden(name, REFUSED_ON_ALLOY, text);
      if (refused) throw new Error(text);
      checkAlloyStructure(text);
      golden(name, "config.alloy", text);
    });
  }
});

/** A fixed permutation that reverses every list, so order in the input cannot leak into the output. */
function reversed(c: TestCase): TestCase {
  const raw = structuredClone(c.raw);
  raw.sources.reverse();
  raw.destinations.reverse();
  for (const p of raw.pipelines) {
    p.topology.nodes.reverse();
    p.topology.edges.reverse();
  }
  raw.pipelines.reverse();
  raw.routes?.reverse();
  raw.activations?.sources.reverse();
  raw.activations?.destinations.reverse();
  return raw.preview === undefined ? { raw, input: toInput(raw) } : loadCaseFrom(raw);
}

function loadCaseFrom(raw: TestCase["raw"]): TestCase {
  const pipeline = raw.pipelines.find((p) => p.id === raw.preview)!;
  return {
    raw,
    preview: {
      pipeline,
      sources: new Map(raw.sources.map((s) => [s.id, s])),
      destinations: new Map(raw.destinations.map((d) => [d.id, d])),
    },
  };
}

describe("deterministic output", () => {
  for (const name of CASES) {
    test(`${name}: the order of records, nodes, edges and routes does not matter`, () => {
      const c = loadCase(name);
      expect(render(reversed(c), "otelcol")).toBe(render(c, "otelcol"));
      expect(renderAlloyOrRefusal(reversed(c))).toEqual(renderAlloyOrRefusal(c));
    });
  }
});
