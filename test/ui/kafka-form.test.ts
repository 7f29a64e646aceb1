/**
 * The Kafka and Kubernetes source types in Debian's chromium against the
 * real server: the type picker says which run on Runtime O only; a Kafka
 * source is made through the form generated from its schema (brokers list,
 * per-signal topic and encoding groups with the schema's defaults, a SASL
 * group whose password is a write-only secret), and its password never
 * comes back to the page.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../harness.ts";
import { openBrowser, signIn, type BrowserSession } from "./browser.ts";

let server: TestServer;
let browser: BrowserSession;
const SLOW = 30_000;
const PASSWORD = "kafka-ui-pass-8d2c-plaintext";

beforeAll(async () => {
  server = await startTestServer();
  browser = await openBrowser({ width: 1280, height: 800 });
  const admin = await server.uiAdmin();
  await signIn(browser.page, server.base, admin, "/ui/sources");
}, SLOW);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

test(
  "a Kafka source from its generated form; the Kubernetes metrics types say they are not for Alloy",
  async () => {
    const { page } = browser;
    await page.getByRole("button", { name: "New source" }).click();
    await page.getByRole("heading", { name: "New source: choose a type" }).waitFor();
    for (const type of ["k8s_cluster", "kubeletstats"])
      expect(await page.locator(`#type-${type}-hint`).textContent()).toContain("Not available on Alloy (remote config).");
    for (const type of ["kafka", "k8s_events"]) expect(await page.locator(`#type-${type}-hint`).textContent()).not.toContain("Alloy");

    await page.getByRole("button", { name: "Kafka" }).click();
    await page.getByRole("heading", { name: "New source: Kafka" }).waitFor();
    // Defaults from the schema: each signal's topic and encoding, the offset.
    expect(await page.getByLabel("Initial offset").inputValue()).toBe("latest");
    const logs = page.getByRole("group", { name: "Logs" });
    expect(await logs.getByLabel("Topic").inputValue()).toBe("otlp_logs");
    expect(await logs.getByLabel("Encoding").inputValue()).toBe("otlp_proto");
    expect(await page.getByRole("group", { name: "Traces" }).getByLabel("Topic").inputValue()).toBe("otlp_spans");

    await page.getByLabel(/^Name/).fill("queue");
    await page.getByLabel("Brokers 1", { exact: true }).fill("kafka-1:9093");
    await logs.getByLabel("Encoding").selectOption("json");
    await page.getByRole("group", { name: "TLS" }).getByLabel("Enabled").check();
    const sasl = page.getByRole("group", { name: "SASL authentication" });
    await sasl.getByLabel("Username").fill("svc");
    await sasl.getByLabel("Password", { exact: true }).fill(PASSWORD);
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByText('Created source "queue".', { exact: false }).waitFor();
    expect(await page.content()).not.toContain(PASSWORD);

    const [stored] = (await server.call<{ items: { type: string; config: Record<string, unknown> }[] }>("/sources")).items.filter((s) => s.type === "kafka");
    expect(stored!.config).toMatchObject({
      brokers: ["kafka-1:9093"],
      logs: { topic: "otlp_logs", encoding: "json" },
      tls: { enabled: true },
      sasl: { mechanism: "SCRAM-SHA-512", username: "svc", password: { secret: true, set: true } },
    });
    browser.assertClean();
  },
  SLOW,
);
