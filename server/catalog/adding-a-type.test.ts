/**
 * Adding a catalog type is its folder and one registry line: in a temporary
 * copy of the tree, a new source type (Zipkin) is written as a folder and
 * registered with one line, and with nothing else changed the copy's
 * catalog, upstream tables, corpus, parity table and generated conformance
 * suite all carry it, and that suite fails when the new folder's upstream
 * record does not hold its render. The one generated file, the parity table
 * in docs/runtime-parity.md, gains its row from scripts/runtime-parity.ts.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { DESTINATION_FOLDERS, SOURCE_TYPES } from "./registry.ts";

const ROOT = resolve(import.meta.dir, "../..");
const COPIED = ["server", "shared"];
const DOC = "docs/runtime-parity.md";
const WRITER = "scripts/runtime-parity.ts";
const FOLDER = "server/catalog/sources/zipkin";
const REGISTRY = "server/catalog/registry.ts";
const AFTER = 'import "./sources/k8s_events/index.ts";';
const LINE = 'import "./sources/zipkin/index.ts";';

/** The new type's folder, file by file, as someone adding it would write it. */
const NEW_FOLDER: Record<string, string> = {
  "zipkin.ts": `/** Zipkin spans over HTTP. */
import { Type } from "@sinclair/typebox";
import { attr, block } from "../../alloy-syntax.ts";
import { Closed, ListenAddress } from "../../schemas.ts";
import { defineSource } from "../../types.ts";

export const zipkinSource = defineSource({
  kind: "source",
  type: "zipkin",
  title: "Zipkin",
  description: "Receives Zipkin spans over HTTP.",
  signals: ["traces"],
  delivery: {
    otelcol: "spans translated from Zipkin",
    alloy: "the same: otelcol.receiver.zipkin wraps the collector's receiver",
    normalised: null,
    difference: null,
    differsAs: null,
    upstream: [{ repo: "grafana/alloy", path: "internal/component/otelcol/receiver/zipkin/zipkin.go", version: "v1.18.1", fact: "wraps contrib's zipkinreceiver" }],
  },
  schema: Closed({
    endpoint: ListenAddress({ default: "localhost:9411", description: "host:port to listen on." }),
    parse_string_tags: Type.Boolean({ default: false, description: "Parse string tags into typed attributes." }),
  }),
  otelcol(config) {
    return { type: "zipkin", config: { endpoint: config.endpoint, parse_string_tags: config.parse_string_tags } };
  },
  alloy(config, label, output) {
    return [block("otelcol.receiver.zipkin", label, [attr("endpoint", config.endpoint), attr("parse_string_tags", config.parse_string_tags), output])];
  },
});
`,
  "zipkin.test.ts": `import { describe, expect, test } from "bun:test";
import { findType } from "../../registry.ts";
import { validateComponentConfig } from "../../validate.ts";

describe("zipkin source", () => {
  test("listens on loopback by default", () => {
    const config = validateComponentConfig("source", "zipkin", {});
    expect(findType("source", "zipkin")!.otelcol(config)).toEqual({ type: "zipkin", config: { endpoint: "localhost:9411", parse_string_tags: false } });
  });
});
`,
  "upstream.ts": `/** The zipkin source's upstream facts: the collector's zipkin receiver and Alloy's otelcol.receiver.zipkin. */
import { alloyAt, attr, contrib, OUTPUT } from "../../upstream/shared.ts";
import type { TypeUpstream } from "../../upstream/types.ts";

export const UPSTREAM: TypeUpstream = {
  otelcol: [
    {
      type: "zipkin",
      kind: "receiver",
      source: contrib("receiver/zipkinreceiver/config.go", "v0.149.0"),
      config: { endpoint: "string", parse_string_tags: "bool" },
    },
  ],
  alloy: [
    {
      name: "otelcol.receiver.zipkin",
      stability: "generally-available",
      source: alloyAt("internal/component/otelcol/receiver/zipkin/zipkin.go"),
      arguments: { endpoint: attr("string"), parse_string_tags: attr("bool"), output: OUTPUT },
    },
  ],
};
`,
  "corpus.ts": `import type { CorpusConfig } from "../../folder.ts";

export const CORPUS: readonly CorpusConfig[] = [{}, { endpoint: "0.0.0.0:9411", parse_string_tags: true }];
`,
  "index.ts": `import { registerFolder } from "../../folder.ts";
import { CORPUS } from "./corpus.ts";
import { UPSTREAM } from "./upstream.ts";
import { zipkinSource } from "./zipkin.ts";

registerFolder({ type: zipkinSource, upstream: UPSTREAM, corpus: CORPUS });
`,
};

/** What the copy's catalog says about zipkin, read by a process of its own (the copy's modules, not this one's). */
const PROBE = `
import { catalogView } from "./server/catalog/registry.ts";
import { corpus } from "./server/catalog/upstream/corpus.ts";
import { alloyComponent, otelcolComponent } from "./server/catalog/upstream/tables.ts";
import { parityTable } from "./server/catalog/sources/parity-table.ts";
console.log(JSON.stringify({
  sources: catalogView().sources.map((s) => s.type),
  runtimes: catalogView().sources.find((s) => s.type === "zipkin")?.runtimes,
  otelcol: otelcolComponent("receiver", "zipkin")?.source.path,
  alloy: alloyComponent("otelcol.receiver.zipkin")?.source.path,
  corpus: [...corpus([null])].filter((e) => e.name.includes(" zipkin#")).length,
  parity: parityTable().split("\\n").filter((row) => row.startsWith("| \`zipkin\` |")).length,
}));
`;

function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)));
}

function run(cwd: string, args: string[]): { code: number; output: string } {
  const result = Bun.spawnSync([process.execPath, ...args], { cwd, stdout: "pipe", stderr: "pipe" });
  return { code: result.exitCode, output: result.stdout.toString() + result.stderr.toString() };
}

describe("a new catalog type in a copy of the tree", () => {
  let copy: string;

  beforeAll(() => {
    copy = mkdtempSync(join(tmpdir(), "svc-catalog-type-"));
    for (const path of [...COPIED, DOC, WRITER]) cpSync(join(ROOT, path), join(copy, path), { recursive: true });
    symlinkSync(join(ROOT, "node_modules"), join(copy, "node_modules"));
    mkdirSync(join(copy, FOLDER));
    for (const [name, text] of Object.entries(NEW_FOLDER)) writeFileSync(join(copy, FOLDER, name), text);
    const registry = readFileSync(join(copy, REGISTRY), "utf8");
    expect(registry).toContain(`${AFTER}\n`);
    writeFileSync(join(copy, REGISTRY), registry.replace(`${AFTER}\n`, `${AFTER}\n${LINE}\n`));
  });

  afterAll(() => rmSync(copy, { recursive: true, force: true }));

  test("differs from the tree by one folder and one registry line", () => {
    for (const dir of COPIED) {
      const real = files(join(ROOT, dir)).sort();
      const copied = files(join(copy, dir)).sort();
      const added = copied.filter((f) => !real.includes(f)).map((f) => `${dir}/${f}`);
      expect(added.every((f) => f.startsWith(`${FOLDER}/`))).toBe(true);
      expect(copied.filter((f) => real.includes(f)).length).toBe(real.length);
      const changed = real.filter((f) => !readFileSync(join(ROOT, dir, f)).equals(readFileSync(join(copy, dir, f)))).map((f) => `${dir}/${f}`);
      expect(changed).toEqual(dir === "server" ? [REGISTRY] : []);
    }
    expect(files(join(copy, FOLDER)).sort()).toEqual(Object.keys(NEW_FOLDER).sort());
    const before = readFileSync(join(ROOT, REGISTRY), "utf8").split("\n");
    const after = readFileSync(join(copy, REGISTRY), "utf8").split("\n");
    const at = after.indexOf(LINE);
    expect(after.toSpliced(at, 1)).toEqual(before);
  });

  test("the copy's catalog, upstream tables, corpus and parity table carry it", () => {
    writeFileSync(join(copy, "probe.ts"), PROBE);
    const { code, output } = run(copy, ["probe.ts"]);
    expect({ code, output }).toEqual({ code: 0, output: expect.any(String) });
    const seen = JSON.parse(output.trim().split("\n").at(-1)!);
    expect(seen).toEqual({
      sources: [...SOURCE_TYPES.map((t) => t.type), "zipkin"],
      runtimes: ["otelcol", "alloy"],
      otelcol: "receiver/zipkinreceiver/config.go",
      alloy: "internal/component/otelcol/receiver/zipkin/zipkin.go",
      // Its two configs into every config of each destination that carries traces.
      corpus: 2 * DESTINATION_FOLDERS.filter((f) => f.type.signals.includes("traces")).reduce((n, f) => n + f.corpus.length, 0),
      parity: 1,
    });
  }, 60_000);

  test("the parity table's writer adds its row to the copy's docs/runtime-parity.md and changes nothing else there", () => {
    const { code, output } = run(copy, [WRITER]);
    expect({ code, output }).toEqual({ code: 0, output: "" });
    const before = readFileSync(join(ROOT, DOC), "utf8").split("\n");
    const after = readFileSync(join(copy, DOC), "utf8").split("\n");
    const rows = after.filter((row) => !before.includes(row));
    expect(rows).toEqual([expect.stringMatching(/^\| `zipkin` \| spans translated from Zipkin \|/)]);
    expect(after.toSpliced(after.indexOf(rows[0]!), 1)).toEqual(before);
  });

  test("the copy's generated conformance suite checks it, and its folder's own test runs", () => {
    const conformance = run(copy, ["test", "--timeout", "60000", "./server/catalog/conformance.test.ts", "-t", "source zipkin"]);
    expect(conformance.output).toContain("(pass) source zipkin > its corpus renders conform to upstream on both runtimes");
    expect(conformance.output).toContain("\n 3 pass\n");
    expect(conformance.output).toContain("\n 0 fail\n");
    expect(conformance.code).toBe(0);
    const own = run(copy, ["test", `./${FOLDER}/zipkin.test.ts`]);
    expect(own.output).toContain("(pass) zipkin source > listens on loopback by default");
    expect(own.code).toBe(0);
  }, 120_000);

  test("the copy's conformance suite fails when the new folder's record does not hold its render", () => {
    const path = join(copy, FOLDER, "upstream.ts");
    writeFileSync(path, readFileSync(path, "utf8").replace('config: { endpoint: "string", parse_string_tags: "bool" }', 'config: { endpoint: "string" }'));
    const { code, output } = run(copy, ["test", "--timeout", "60000", "./server/catalog/conformance.test.ts", "-t", "source zipkin"]);
    expect(output).toContain("receivers.zipkin/s.parse_string_tags: is not a key upstream takes here");
    expect(code).not.toBe(0);
  }, 120_000);
});
