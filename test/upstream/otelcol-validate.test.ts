/**
 * Every Runtime O config svc writes, checked by the real collector: each
 * golden (server/render/testdata), the generated corpus of every catalog type
 * with each option set on every signal it carries (server/catalog/upstream/corpus.ts)
 * and the enrollment bootstrap file go, as delivered (secrets in place, the
 * host environment values set), through `otelcol-svc validate`, the
 * collector's own config loading and every component's Validate(). The
 * collector is test/peers/bin/otelcol-svc, built from test/peers/builder.yaml
 * by scripts/peers.sh before the tests.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { corpus, corpusInput } from "../../server/catalog/upstream/corpus.ts";
import { bootstrapFiles } from "../../server/enrollment/bootstrap.ts";
import { renderOtelcol } from "../../server/render/otelcol.ts";
import { attributeTemplate, fillTemplate } from "../../server/render/attributes.ts";
import { planCollector } from "../../server/render/plan.ts";
import { deliverable } from "../../server/render/secrets.ts";
import { loadCase, TESTDATA } from "../../server/render/testdata/load.ts";
import { peer } from "../peers/peers.ts";

/** The release test/peers builds (builder.yaml's dist.version); the renderer picks names by it. */
const COLLECTOR_VERSION = "0.149.0";
/** The release installer/install.sh installs. */
const INSTALLED_VERSION = /^COLLECTOR_VERSION=(\S+)$/m.exec(readFileSync(join(import.meta.dir, "../../installer/install.sh"), "utf8"))![1]!;
/** Validations at once: each is one short-lived process, mostly waiting on its own start-up. */
const CONCURRENCY = 4;
/** One validation's own deadline; a collector that hangs past it is killed and reported. */
const DEADLINE_MS = 60_000;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "otelcol-validate-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Config {
  name: string;
  yaml: string;
}

/**
 * The config as a collector receives it: each attribute reference filled
 * with that collector's value, each secret marker replaced by a plaintext.
 */
async function delivered(name: string, yaml: string, plan?: ReturnType<typeof planCollector>): Promise<Config> {
  const template = plan && attributeTemplate("otelcol", yaml, plan.references);
  const filled = template ? fillTemplate(template, "c1", Object.fromEntries(template.keys.map((key) => [key, "a1"]))) : yaml;
  return { name, yaml: await deliverable("otelcol", filled, async (id) => `s3cr3t-${id}$x`) };
}

/**
 * What only the host can fix: the kubelet receiver, on its default
 * serviceAccount auth, reads the pod's service-account CA when it is created,
 * after the config decoded and validated; this host is no Kubernetes pod.
 */
const NOT_A_POD =
  /^exit 1 : Error: failed to build pipelines: failed to create "kubeletstats\/[^"]+" receiver for data type "metrics": cert path \/var\/run\/secrets\/kubernetes\.io\/serviceaccount\/ca\.crt could not be read: open [^\n]*: no such file or directory$/;

/** The collector's answer for each config: undefined when it validates, else its message. */
async function validate(configs: readonly Config[]): Promise<Map<string, string | undefined>> {
  const otelcol = peer("otelcol");
  const answers = new Map<string, string | undefined>();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < configs.length) {
      const i = next++;
      const { name, yaml } = configs[i]!;
      const file = join(dir, `${i}.yaml`);
      writeFileSync(file, yaml);
      // Every `${env:NAME}` the config takes from the host gets a value, as on a host that sets it.
      const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir };
      for (const [, variable] of yaml.matchAll(/\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g)) env[variable!] = `from-host-${variable}`;
      const child = Bun.spawn([otelcol, "validate", `--config=file:${file}`], { env, stdout: "pipe", stderr: "pipe", timeout: DEADLINE_MS });
      const [code, stderr] = await Promise.all([child.exited, new Response(child.stderr).text()]);
      answers.set(name, code === 0 ? undefined : `exit ${code} ${child.signalCode ?? ""}: ${stderr.trim()}`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return answers;
}

/** Those the collector refused, by name with its message (not for want of a Kubernetes pod). */
function refused(answers: Map<string, string | undefined>): string[] {
  return [...answers].filter(([, message]) => message !== undefined && !NOT_A_POD.test(message)).map(([name, message]) => `${name}: ${message}`);
}

describe("the real collector validates every config svc renders", () => {
  test("every golden", async () => {
    const cases = readdirSync(TESTDATA, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
    const configs = await Promise.all(
      cases.map((name) => {
        const c = loadCase(name);
        return delivered(`golden ${name}`, readFileSync(join(TESTDATA, name, "otelcol.yaml"), "utf8"), c.input && planCollector(c.input, "otelcol"));
      }),
    );
    expect(configs.length).toBeGreaterThan(10);
    expect(refused(await validate(configs))).toEqual([]);
  }, 300_000);

  test("every catalog type with each option set, on every signal, unknown version and the built release", async () => {
    const seen = new Set<string>();
    const configs: Config[] = [];
    const variants = [...corpus([null, COLLECTOR_VERSION])].map((entry) => ({ name: entry.name, yaml: renderOtelcol(entry.input) }));
    // filelog's line_end_pattern, which only Runtime O takes (conform.test.ts "options one runtime refuses").
    const lineEnd = corpusInput(
      "logs",
      ["filelog", { include: ["/var/log/*.log"], multiline: { line_end_pattern: "\\}$" } }],
      ["otlp", { endpoint: "gw:4317" }],
      null,
    );
    variants.push({ name: "logs filelog line_end_pattern", yaml: renderOtelcol(lineEnd) });
    for (const { name, yaml } of variants) {
      const body = yaml.replace(/^#.*\n/gm, "");
      if (seen.has(body)) continue;
      seen.add(body);
      configs.push(await delivered(name, yaml));
    }
    expect(configs.length).toBeGreaterThan(100);
    expect(refused(await validate(configs))).toEqual([]);
  }, 600_000);

  test("the enrollment bootstrap file", async () => {
    const [collectorFile] = bootstrapFiles("otelcol", new URL("https://svc.example.com"), "c1", "svc_enroll_token");
    expect(collectorFile!.path).toBe("/etc/otel-collector/config.yaml");
    expect(refused(await validate([{ name: "bootstrap", yaml: collectorFile!.body }]))).toEqual([]);
  }, 120_000);
});

describe("the tested release stands for the installed one", () => {
  // The proxy serves the supervisor and the opamp extension at v0.149.0 only (test/peers/go.mod).
  test("svc renders every corpus config the same for both releases", () => {
    const differ = [...corpus([COLLECTOR_VERSION])].filter((entry) => {
      const installed = { ...entry.input, collector: { ...entry.input.collector, version: INSTALLED_VERSION } };
      return renderOtelcol(entry.input) !== renderOtelcol(installed);
    });
    expect(differ.map((entry) => entry.name)).toEqual([]);
  }, 120_000);
});

describe("the check can fail", () => {
  test("a config each component's Validate() refuses is reported with the collector's message", async () => {
    const yaml = [
      "receivers: { otlp: { protocols: { grpc: {} } } }",
      "processors: { batch: { send_batch_size: 10, send_batch_max_size: 5 } }",
      "exporters: { otlp_grpc: { endpoint: '' } }",
      "service: { pipelines: { logs: { receivers: [otlp], processors: [batch], exporters: [otlp_grpc] } } }",
    ].join("\n");
    const [message] = refused(await validate([{ name: "bad", yaml }]));
    expect(message).toContain("send_batch_max_size");
  }, 120_000);
});
