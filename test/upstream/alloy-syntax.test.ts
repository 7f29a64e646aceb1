/**
 * Every Runtime R config svc writes, checked by Alloy's own syntax module
 * (github.com/grafana/alloy/syntax v0.1.1, the one Alloy v1.18.1 builds with):
 * each golden (server/render/testdata), the generated corpus of every catalog
 * type with each option set on every signal (server/catalog/upstream/corpus.ts)
 * and the enrollment bootstrap file go, as delivered (attribute references and
 * secrets filled in), through test/peers/bin/alloy-syntax: parsed, every
 * reference resolved to a declared component, every attribute evaluated, as
 * Alloy's loader does before any component runs. Alloy itself, whose
 * components would decode each block, cannot be built from the module proxy
 * (README "Tests").
 */
import { describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { CollectorConfigInput } from "../../server/catalog/render-input.ts";
import { corpus, corpusInput } from "../../server/catalog/upstream/corpus.ts";
import { bootstrapFiles } from "../../server/enrollment/bootstrap.ts";
import { attributeTemplate, fillTemplate } from "../../server/render/attributes.ts";
import { renderAlloy } from "../../server/render/alloy.ts";
import { planCollector } from "../../server/render/plan.ts";
import { deliverable } from "../../server/render/secrets.ts";
import { loadCase, TESTDATA } from "../../server/render/testdata/load.ts";
import { peer } from "../peers/peers.ts";

/** One run's own deadline, for the whole batch; a checker that hangs past it is killed and reported. */
const DEADLINE_MS = 120_000;

interface Checked {
  errors: string[];
  /** Every attribute's value as Alloy evaluated it, by `block id/nested block/attribute`. */
  values?: Record<string, unknown[]>;
}

/** Alloy's answer for each config, by name; `values` asks for the evaluated attributes too. */
async function check(configs: readonly { name: string; text: string }[], values = false): Promise<Map<string, Checked>> {
  // Every `sys.env("NAME")` a config reads gets a value, as on a host that sets it.
  const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin" };
  for (const { text } of configs) for (const [, name] of text.matchAll(/sys\.env\("([A-Za-z_][A-Za-z0-9_]*)"\)/g)) env[name!] = `from-host-${name}`;
  const child = Bun.spawn([peer("alloySyntax")], { env, stdin: "pipe", stdout: "pipe", stderr: "pipe", timeout: DEADLINE_MS });
  child.stdin.write(configs.map((c) => JSON.stringify({ ...c, values })).join("\n") + "\n");
  await child.stdin.end();
  const [code, stdout, stderr] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
  if (code !== 0) throw new Error(`alloy-syntax exited ${code} ${child.signalCode ?? ""}: ${stderr}`);
  const answers = new Map<string, Checked>();
  for (const line of stdout.trim().split("\n")) {
    const { name, ...checked } = JSON.parse(line) as Checked & { name: string };
    answers.set(name, checked);
  }
  expect([...answers.keys()]).toEqual(configs.map((c) => c.name));
  return answers;
}

function refused(answers: Map<string, Checked>): string[] {
  return [...answers].filter(([, a]) => a.errors.length > 0).map(([name, a]) => `${name}: ${a.errors.join("; ")}`);
}

/** An OTLP destination's headers in each stored form: one referencing an attribute, a secret, one from the host. */
const HEADERS = {
  "X-Plain": { value: 'v-{{attr "weird"}}', secret: false },
  Authorization: { secret: "0190a8c2-7b3e-7c41-9d2e-5f6a7b8c9d01" },
  "X-Host": { env: "GW_KEY" },
};

/** A secret's plaintext with what Alloy's strings escape: quotes, backslashes, a newline, `${`, non-ASCII. */
const plaintextOf = async (id: string) => `s3"cr\\3t-${id}\n\${x}$ü`;

/** The config as a collector receives it: each attribute reference filled in, each secret marker replaced by its plaintext. */
async function delivered(input: CollectorConfigInput, attributes: (key: string) => string = () => "a1"): Promise<string> {
  const plan = planCollector(input, "alloy");
  const text = renderAlloy(input, plan);
  const template = attributeTemplate("alloy", text, plan.references);
  const filled = template ? fillTemplate(template, input.collector.id, Object.fromEntries(template.keys.map((key) => [key, attributes(key)]))) : text;
  return deliverable("alloy", filled, plaintextOf);
}

describe("Alloy's syntax module takes every config svc renders for Runtime R", () => {
  test("every golden, delivered", async () => {
    const cases = readdirSync(TESTDATA, { withFileTypes: true })
      .filter((e) => e.isDirectory() && readdirSync(join(TESTDATA, e.name)).includes("config.alloy"))
      .map((e) => e.name)
      .sort();
    const configs = await Promise.all(
      cases.map(async (name) => {
        const c = loadCase(name);
        // A preview golden has no collector: it is checked as written.
        const text = c.input ? await delivered(c.input) : readFileSync(join(TESTDATA, name, "config.alloy"), "utf8");
        return { name: `golden ${name}`, text };
      }),
    );
    expect(configs.length).toBeGreaterThan(10);
    expect(refused(await check(configs))).toEqual([]);
  }, 180_000);

  test("every catalog type with each option set, on every signal", async () => {
    const seen = new Set<string>();
    const configs: { name: string; text: string }[] = [];
    for (const entry of corpus()) {
      if (entry.alloy === null) continue;
      const text = await delivered(entry.alloy);
      if (seen.has(text)) continue;
      seen.add(text);
      configs.push({ name: entry.name, text });
    }
    expect(configs.length).toBeGreaterThan(100);
    expect(refused(await check(configs))).toEqual([]);
  }, 300_000);

  test("the enrollment bootstrap file, with the url, id and token svc wrote", async () => {
    const [file] = bootstrapFiles("alloy", new URL("https://svc.example.com"), "c1", 'svcct_t0k"en');
    const answers = await check([{ name: "bootstrap", text: file!.body }], true);
    expect(refused(answers)).toEqual([]);
    expect(answers.get("bootstrap")!.values).toMatchObject({
      "remotecfg/url": ["https://svc.example.com"],
      "remotecfg/id": ["c1"],
      "remotecfg/bearer_token": ['svcct_t0k"en'],
      "remotecfg/poll_frequency": ["1m"],
      "otelcol.exporter.otlphttp.svc_self/client/headers": [{ Authorization: 'Bearer svcct_t0k"en' }],
    });
  }, 60_000);
});

describe("what svc quotes, Alloy reads back exactly", () => {
  test("secrets, attribute values (also inside an OTTL string) and host variables", async () => {
    const weird = `we"ird\\va$l {{x}} ü`;
    // The corpus's logs chain, its resource processor setting an attribute from the collector's.
    const base = corpusInput("logs", ["otlp", {}], ["otlphttp", { endpoint: "https://gw.example.com", headers: HEADERS }], null);
    const pipeline = base.pipelines.get("p")!;
    const tag = { type: "resource", config: { attributes: [{ key: "k", action: "upsert", value: '{{attr "weird"}}' }] } };
    const nodes = pipeline.topology.nodes.map((n) => (n.processor?.type === "resource" ? { ...n, processor: tag } : n));
    const input: CollectorConfigInput = { ...base, pipelines: new Map([["p", { ...pipeline, topology: { ...pipeline.topology, nodes } }]]) };
    const text = await delivered(input, () => weird);
    const { errors, values } = (await check([{ name: "quoting", text }], true)).get("quoting")!;
    expect(errors).toEqual([]);
    const headers = Object.entries(values!).find(([path]) => path.endsWith("/client/headers"))![1];
    expect(headers).toEqual([
      { "X-Plain": `v-${weird}`, Authorization: await plaintextOf("0190a8c2-7b3e-7c41-9d2e-5f6a7b8c9d01"), "X-Host": "from-host-GW_KEY" },
    ]);
    // The value sits in an OTTL string literal (Go quoting) inside the Alloy string.
    const statements = Object.entries(values!).flatMap(([path, v]) => (path.endsWith("/statements") ? (v as string[][]).flat() : []));
    expect(statements.filter((statement) => statement.includes('attributes["k"]'))).toEqual([`set(attributes["k"], ${JSON.stringify(weird)})`]);
  }, 60_000);
});

describe("the check can fail", () => {
  test("a dangling reference, a block declared twice and a value of the wrong type get Alloy's messages", async () => {
    const text = [
      'otelcol.processor.batch "b" {',
      "\toutput {",
      "\t\tlogs = [otelcol.exporter.otlphttp.missing.input]",
      "\t}",
      "}",
      'otelcol.processor.batch "b" {}',
    ].join("\n");
    const bad = await check([
      { name: "references", text },
      { name: "types", text: 'otelcol.exporter.otlphttp "d" {\n\tclient { endpoint = 1 + "x" }\n}\n' },
      { name: "syntax", text: 'otelcol.exporter.otlphttp "d" {\n\tclient { endpoint = }\n}\n' },
    ]);
    expect(bad.get("references")!.errors).toEqual([
      "references:6:1: block otelcol.processor.batch.b already declared at references:1:1",
      'references:3:11: component "otelcol.exporter.otlphttp.missing.input" does not exist or is out of scope',
    ]);
    expect(bad.get("types")!.errors).toEqual(['types:2:26: "x" should be number, got string']);
    expect(bad.get("syntax")!.errors).toEqual(["syntax:2:22: expected expression, got }"]);
  }, 60_000);
});
