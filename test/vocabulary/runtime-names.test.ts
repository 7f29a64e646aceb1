/**
 * Each runtime has one name wherever a person reads (shared/vocabulary.ts
 * RUNTIME_NAMES): the UI's text, the server's messages, README and docs/. The
 * spec's internal names ("Runtime O", "Runtime R") and the other names the UI
 * used to mix in are refused (the agent's messages too); wire values (`otelcol`, `opamp`,
 * `rcfg-remotecfg`, …) stay what they are and are not checked here.
 */
import { expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { RUNTIME_NAMES } from "../../shared/vocabulary.ts";

const root = join(import.meta.dir, "../..");

/** Other names a runtime went by; any of these in what a person reads is a second name. */
const BANNED: RegExp[] = [
  /\bRuntime [OR]\b/,
  /Grafana Alloy/,
  /OpenTelemetry collector/, // the product is spelled with a capital C
  /Alloy-style/,
  /\bremotecfg \(/, // "remotecfg (Alloy)", "remotecfg (Runtime R)": the wire word used as a label
  /\(remotecfg\)/,
  /OpAMP \((?:Runtime|OpenTelemetry)/,
];

/** What the UI alone must not say: the protocol as a runtime's name. */
const UI_ONLY = [/\bOpAMP collectors?\b/];

function banned(text: string): string[] {
  return BANNED.filter((re) => re.test(text)).map((re) => re.source);
}

function files(dir: string, keep: (path: string) => boolean): string[] {
  return readdirSync(join(root, dir), { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(root, join(e.parentPath, e.name)))
    .filter(keep);
}

/** The text of a source file a person can read: its string and template literals and JSX text, not its comments or identifiers. */
function readableText(path: string): string[] {
  const text = readFileSync(join(root, path), "utf8");
  // A literal's text is part of the file's, so a file none of the patterns match needs no parse.
  if (![...BANNED, ...UI_ONLY].some((re) => re.test(text))) return [];
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const texts: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isJsxText(node)) texts.push(node.text);
    else if (ts.isTemplateExpression(node)) texts.push(node.head.text, ...node.templateSpans.map((s) => s.literal.text));
    ts.forEachChild(node, visit);
  };
  visit(source);
  return texts;
}

const isSource = (p: string) => /\.tsx?$/.test(p) && !/\.test\.tsx?$/.test(p) && !p.endsWith(".d.ts");

test("the runtime names are the two chosen ones", () => {
  expect(RUNTIME_NAMES).toEqual({ otelcol: "OpenTelemetry Collector (OpAMP)", alloy: "Alloy (remote config)" });
});

test("no UI text, server or agent message or shared description names a runtime otherwise", () => {
  const found: string[] = [];
  for (const path of [...files("server", isSource), ...files("agent", isSource), ...files("shared", isSource)]) {
    if (path.startsWith("server/gen/")) continue; // generated protobuf code
    for (const text of readableText(path)) for (const re of banned(text)) found.push(`${path}: ${re}: ${JSON.stringify(text.slice(0, 120))}`);
  }
  expect(found).toEqual([]);
});

test('the UI does not name a runtime by its protocol: no "OpAMP collector", no remotecfg in visible text', () => {
  const found: string[] = [];
  for (const path of files("server/ui", (p) => p.endsWith(".tsx"))) {
    for (const text of readableText(path)) if (UI_ONLY.some((re) => re.test(text))) found.push(`${path}: ${JSON.stringify(text.trim())}`);
    const source = ts.createSourceFile(path, readFileSync(join(root, path), "utf8"), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if (ts.isJsxText(node) && /\bremotecfg\b/.test(node.text)) found.push(`${path}: ${JSON.stringify(node.text.trim())}`);
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  expect(found).toEqual([]);
});

test("README, BENCHMARKS, docs and the installer's text name each runtime one way", () => {
  const found: string[] = [];
  const docs = files("docs", (p) => p.endsWith(".md"));
  const installer = files("installer", (p) => !p.includes("/testdata/"));
  for (const path of ["README.md", "BENCHMARKS.md", "shared/README.md", ...docs, ...installer]) {
    let text = readFileSync(join(root, path), "utf8");
    // docs/architecture.md names the spec's internal names once, to map them to the runtime names.
    if (path === "docs/architecture.md") text = text.replace(SPEC_NAMES, "");
    for (const re of banned(text)) found.push(`${path}: ${re}`);
  }
  expect(found).toEqual([]);
});

/** The one sentence of docs/architecture.md allowed to name the spec's "Runtime O" and "Runtime R". */
const SPEC_NAMES = /The spec calls them "Runtime O" and "Runtime R"\./;

test("docs/architecture.md maps the spec's names to the runtime names", () => {
  expect(SPEC_NAMES.test(readFileSync(join(root, "docs/architecture.md"), "utf8"))).toBe(true);
});
