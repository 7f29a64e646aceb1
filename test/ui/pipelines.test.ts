/**
 * The pipelines list and editor in Debian's chromium against the real
 * server: a pipeline created in the UI, source → health-check filter →
 * destination put on the canvas from the palette and connected (by
 * dragging a handle and by the Connect form), a custom filter added,
 * reordered and removed through the processor chain, the graph saved, the
 * built-in mixed sample dry-run, the preview for both runtimes, a broken
 * graph's problem pinned to its node, the list's counts and Delete, an
 * attributes processor filled in through the form its catalog schema
 * generates (its API problem beside the field), a viewer's read-only
 * editor, both widths, and no console errors.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Locator } from "playwright-core";
import { startTestServer, type TestServer } from "../harness.ts";
import { freePort } from "../process/spawn.ts";
import { createLogsPipeline, openBrowser, signIn, type BrowserSession } from "./browser.ts";

let server: TestServer;
let browser: BrowserSession;
let pipelineUrl = "";
const SLOW = 30_000;

beforeAll(async () => {
  // Invite links (for the viewer) need the server's public URL.
  const port = freePort();
  server = await startTestServer({ SVC_LISTEN: `127.0.0.1:${port}`, SVC_EXTERNALURL: `http://127.0.0.1:${port}` });
  browser = await openBrowser({ width: 1280, height: 800 });
  await server.call("/sources", "POST", { name: "app logs", type: "filelog", config: { include: ["/var/log/app/*.log"] } });
  await server.call("/destinations", "POST", { name: "backend", type: "otlphttp", config: { endpoint: "https://otlp.example.com" } });
  const admin = await server.uiAdmin();
  const { page } = browser;
  // A failed wait reports itself well before the test's own limit.
  page.setDefaultTimeout(10_000);
  await signIn(page, server.base, admin, "/ui/pipelines");
}, SLOW);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const canvas = () => browser.page.getByRole("group", { name: "Pipeline canvas" });
const canvasNode = (name: string | RegExp) => canvas().getByRole("group", { name });
/** The node list's own items, not the problems listed inside them. */
const nodeCount = () =>
  browser.page
    .getByRole("list", { name: /^Nodes/ })
    .locator(":scope > li")
    .count();
const problems = () => browser.page.getByRole("region", { name: /^Problems/ });

/** A pointer drag in small steps, as React Flow tracks the pointer to find the handle under it. */
async function drag(from: Locator, to: Locator) {
  const { page } = browser;
  const a = (await from.boundingBox())!;
  const b = (await to.boundingBox())!;
  await page.mouse.move(a.x + a.width / 2, a.y + a.height / 2);
  await page.mouse.down();
  await page.mouse.move(a.x + a.width / 2 + 10, a.y + a.height / 2, { steps: 2 });
  await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2, { steps: 10 });
  await page.mouse.up();
}

async function dragFromPalette(item: string, x: number, y: number) {
  await browser.page.getByRole("button", { name: item }).dragTo(canvas(), { targetPosition: { x, y } });
}

test(
  "a pipeline created in the UI opens in the editor",
  async () => {
    const { page } = browser;
    await page.getByText("No pipelines yet.").waitFor();
    await createLogsPipeline(page, "web logs");
    pipelineUrl = page.url();
    await page.getByRole("heading", { name: "web logs", level: 1 }).waitFor();
    await page.getByText("No nodes yet.").waitFor();
  },
  SLOW,
);

test(
  "source, health-check filter and destination go on the canvas from the palette and connect",
  async () => {
    const { page } = browser;
    await dragFromPalette("Add source app logs", 120, 200);
    await dragFromPalette("Add processor Drop Health Check Logs", 420, 200);
    await dragFromPalette("Add destination backend", 720, 200);
    await canvasNode(/^Source app logs \(app-logs\)/).waitFor();
    await canvasNode(/^Processor Filter \(drop-health-check-logs\)/).waitFor();
    await canvasNode(/^Destination backend \(backend\)/).waitFor();
    expect(await nodeCount()).toBe(3);

    // The live check has pinned its problems: the badges have grown the cards, so the handles stay put from here.
    await problems().getByRole("heading", { name: "Problems (3)" }).waitFor();
    // An edge drawn on the canvas, from the source's handle to the filter's.
    const handle = (id: string, side: "source" | "target") => canvas().locator(`.react-flow__node[data-id="${id}"] .react-flow__handle.${side}`);
    await drag(handle("app-logs", "source"), handle("drop-health-check-logs", "target"));
    const edges = page.getByRole("list", { name: /^Edges/ });
    await edges.getByText("app logs (app-logs) → Filter (drop-health-check-logs)").waitFor();

    // The keyboard alternative: the Connect form.
    await page.getByLabel("From", { exact: true }).selectOption("drop-health-check-logs");
    await page.getByLabel("To", { exact: true }).selectOption("backend");
    await page.getByRole("button", { name: "Connect" }).click();
    await edges.getByText("Filter (drop-health-check-logs) → backend (backend)").waitFor();
    expect(await edges.getByRole("listitem").count()).toBe(2);

    // The template's three conditions are the filter's.
    const conditions = await page.getByLabel("Conditions of drop-health-check-logs").inputValue();
    expect(conditions.split("\n")).toHaveLength(3);
    expect(conditions).toContain("healthz");
  },
  SLOW,
);

test(
  "the processor chain adds a custom filter, shows its OTTL error inline, reorders and removes it",
  async () => {
    const { page } = browser;
    const chain = page.getByRole("list", { name: "Processors in order" });
    await page.getByLabel("Custom OTTL condition").check();
    await page.getByLabel("OTTL condition", { exact: true }).fill("body ==");
    await page.getByRole("button", { name: "Add filter" }).click();
    await chain.getByText("Filter (filter)").waitFor();
    // The API's parse error, pinned under the processor, on its node and in the problem list.
    const item = chain.getByRole("listitem").filter({ hasText: "Filter (filter)" });
    await item.getByText(/node "filter"/).waitFor();
    await canvasNode(/^Processor Filter \(filter\)\. Problems: /).waitFor();
    await problems()
      .getByText(/^Node Filter \(filter\): /)
      .waitFor();

    await page.getByLabel("Conditions of filter").fill('severity_text == "DEBUG"');
    await problems().getByRole("heading", { name: "Problems (0)" }).waitFor({ state: "attached" });
    expect(await item.getByText(/node "filter"/).count()).toBe(0);

    const order = async () => await chain.locator(":scope > li strong").allTextContents();
    expect(await order()).toEqual(["Filter (drop-health-check-logs)", "Filter (filter)"]);
    await page.getByRole("button", { name: "Move filter up" }).click();
    expect(await order()).toEqual(["Filter (filter)", "Filter (drop-health-check-logs)"]);
    // Reordering rewires the flow: the source now feeds the custom filter.
    await page
      .getByRole("list", { name: /^Edges/ })
      .getByText("app logs (app-logs) → Filter (filter)")
      .waitFor();
    await page.getByRole("button", { name: "Remove filter" }).click();
    expect(await order()).toEqual(["Filter (drop-health-check-logs)"]);
    const edges = page.getByRole("list", { name: /^Edges/ });
    // Removing joins its neighbours again.
    expect((await edges.locator(":scope > li > span").allTextContents()).sort()).toEqual([
      "Filter (drop-health-check-logs) → backend (backend)",
      "app logs (app-logs) → Filter (drop-health-check-logs)",
    ]);
  },
  SLOW,
);

test(
  "auto-layout lines the graph up and save stores it",
  async () => {
    const { page } = browser;
    await page.getByRole("button", { name: "Auto-layout" }).click();
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await page.getByRole("status").getByText("Saved", { exact: true }).waitFor();
    const saved = await server.call<{ nodes: { id: string; kind: string; position: { x: number; y: number } }[]; edges: { source: string; target: string }[] }>(
      `/pipelines/${pipelineUrl.split("/").pop()}/topology`,
    );
    expect(saved.nodes.map((n) => `${n.kind}:${n.id}`)).toEqual(["source:app-logs", "processor:drop-health-check-logs", "destination:backend"]);
    // One layer per step of the flow, left to right.
    expect(saved.nodes.map((n) => n.position)).toEqual([
      { x: 0, y: 0 },
      { x: 240, y: 0 },
      { x: 480, y: 0 },
    ]);
    expect(saved.edges.map((e) => `${e.source}>${e.target}`).sort()).toEqual(["app-logs>drop-health-check-logs", "drop-health-check-logs>backend"]);
  },
  SLOW,
);

test(
  "the dry-run of the mixed sample keeps only the non-health records",
  async () => {
    const { page } = browser;
    await page.getByRole("button", { name: "Load mixed sample" }).click();
    await page.getByRole("button", { name: "Run" }).click();
    const steps = page.getByRole("region", { name: "Steps" });
    const row = steps.getByRole("row", { name: /drop-health-check-logs/ });
    await row.waitFor();
    expect(await row.getByRole("cell").allTextContents()).toEqual(["filter", "7", "4"]);
    const output = page.getByRole("region", { name: "Final output" });
    expect(await output.getByRole("listitem").locator("code").allTextContents()).toEqual([
      "GET /api/orders/42 HTTP/1.1 200",
      "POST /api/payments HTTP/1.1 502",
      "GET /readyz HTTP/1.1 200",
      "GET /api/live-stream HTTP/1.1 200",
    ]);
    await page.getByText("4 records survive 1 step.").waitFor();
    // The source node is the "app logs" files: the filter reads body and attributes, which files deliver alike on both runtimes.
    const runtimes = page.getByRole("note", { name: "Runtimes" });
    await runtimes.getByText("Holds on OpenTelemetry Collector and Alloy collectors alike for filelog sources.").waitFor();
    expect(await runtimes.getByText(/^Not on Alloy collectors/).count()).toBe(0);
  },
  SLOW,
);

test(
  "the preview renders the filter for both runtimes",
  async () => {
    const { page } = browser;
    const otelcol = page.getByRole("region", { name: "Rendered config (OpenTelemetry Collector (OpAMP))" });
    await otelcol
      .getByText(/filter\/|filter:/)
      .first()
      .waitFor();
    expect(await otelcol.textContent()).toContain("healthz");
    await page.getByLabel("Alloy").check();
    const alloy = page.getByRole("region", { name: "Rendered config (Alloy (remote config))" });
    await alloy
      .getByText(/otelcol\.processor\.filter/)
      .first()
      .waitFor();
    expect(await alloy.textContent()).toContain("healthz");
    await browser.screenshot("pipeline-editor-1280");
    await page.emulateMedia({ colorScheme: "dark" });
    await browser.screenshot("pipeline-editor-dark-1280");
    await page.emulateMedia({ colorScheme: "light" });
  },
  SLOW,
);

test(
  "a dangling node's problem is pinned to it and Save refuses it",
  async () => {
    const { page } = browser;
    // Dropped on the canvas, a node stays where it lands, unconnected (pressing an item wires it in: editor.test.ts).
    await dragFromPalette("Add processor Batch", 420, 420);
    const batch = canvasNode(/^Processor Batch \(batch\)\. Problems: .*not reachable from any source/);
    await batch.waitFor();
    await batch.getByText("1 problem").waitFor();
    await problems()
      .getByText(/^Node Batch \(batch\): node "batch" is not reachable from any source/)
      .waitFor();
    await page.getByRole("button", { name: "Save", exact: true }).click();
    // The preview said so already; Save's own answer is the second alert.
    await page
      .getByRole("alert")
      .filter({ hasText: /The pipeline topology is not valid: node "batch"/ })
      .nth(1)
      .waitFor();
    await browser.screenshot("pipeline-editor-problem-1280");

    // Select it on the canvas and press Delete: the problem goes with it.
    await batch.click();
    await page.keyboard.press("Delete");
    await problems().getByRole("heading", { name: "Problems (0)" }).waitFor({ state: "attached" });
    expect(await nodeCount()).toBe(3);
    await page.getByRole("status").getByText("Saved", { exact: true }).waitFor();
  },
  SLOW,
);

test(
  "the editor fits a 390 px phone and keeps the saved graph on reload",
  async () => {
    const { page } = browser;
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await canvasNode(/^Processor Filter \(drop-health-check-logs\)/).waitFor();
    expect(await nodeCount()).toBe(3);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBe(0);
    await browser.screenshot("pipeline-editor-390");
    await page.setViewportSize({ width: 1280, height: 800 });
  },
  SLOW,
);

test(
  "the list shows node counts and deletes after confirmation",
  async () => {
    const { page } = browser;
    await server.call("/pipelines", "POST", { name: "scratch", signal: "metrics" });
    await page.getByRole("link", { name: "← Pipelines" }).click();
    const table = page.getByRole("region", { name: "Pipelines" });
    const row = table.getByRole("row", { name: /web logs/ });
    await row.waitFor();
    expect(await row.getByRole("cell").allTextContents()).toEqual(["logs", "by route", "1", "1", "1", "Delete"]);
    await table.getByRole("row", { name: /scratch/ }).waitFor();
    await browser.screenshot("pipelines-1280");
    await page.setViewportSize({ width: 390, height: 844 });
    await browser.screenshot("pipelines-390");
    await page.setViewportSize({ width: 1280, height: 800 });

    page.once("dialog", (dialog) => void dialog.dismiss());
    await page.getByRole("button", { name: "Delete scratch" }).click();
    expect(await table.getByRole("row", { name: /scratch/ }).count()).toBe(1);
    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Delete scratch" }).click();
    await page.getByText("1 pipeline.").waitFor();
    expect(await table.getByRole("row", { name: /scratch/ }).count()).toBe(0);
  },
  SLOW,
);

test(
  "an attributes processor is edited in its schema's form, a problem beside its field, and saved",
  async () => {
    const { page } = browser;
    await page.goto(pipelineUrl);
    await canvasNode(/^Processor Filter \(drop-health-check-logs\)/).waitFor();
    await page.getByRole("button", { name: "Add processor Attributes" }).click();
    for (const [from, to] of [
      ["drop-health-check-logs", "attributes"],
      ["attributes", "backend"],
    ]) {
      await page.getByLabel("From", { exact: true }).selectOption(from!);
      await page.getByLabel("To", { exact: true }).selectOption(to!);
      await page.getByRole("button", { name: "Connect" }).click();
    }
    const item = page.getByRole("list", { name: "Processors in order" }).locator(":scope > li").filter({ hasText: "Attributes (attributes)" });
    // A new attributes processor starts with one action to fill in.
    const action = item.getByRole("group", { name: "Actions 1" });
    await action.getByLabel(/^Key/).fill("env");
    await action.getByLabel(/^Action/).selectOption("upsert");
    // Upsert needs a value: the API says so beside Value, and in the problem list, not again under the processor.
    const value = action.getByLabel("Value", { exact: true });
    await action.getByText("'upsert' needs a value", { exact: true }).waitFor();
    expect(await value.getAttribute("aria-invalid")).toBe("true");
    expect(await value.getAttribute("aria-describedby")).toContain(`${await value.getAttribute("id")}-error`);
    await problems()
      .getByText(/^Node Attributes \(attributes\): node "attributes": 'upsert' needs a value/)
      .waitFor();
    expect(await item.locator(".pinned-problems").count()).toBe(0);

    await value.fill("prod");
    await problems().getByRole("heading", { name: "Problems (0)" }).waitFor({ state: "attached" });
    expect(await value.getAttribute("aria-invalid")).toBeNull();
    await browser.screenshot("pipeline-processor-form-1280");
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await page.getByRole("status").getByText("Saved", { exact: true }).waitFor();
    const saved = await server.call<{ nodes: { id: string; processor?: unknown }[] }>(`/pipelines/${pipelineUrl.split("/").pop()}/topology`);
    expect(saved.nodes.find((n) => n.id === "attributes")?.processor).toEqual({
      type: "attributes",
      config: { actions: [{ key: "env", action: "upsert", value: "prod" }] },
    });

    // The same config as JSON, for whoever prefers it.
    await item.getByLabel("Edit attributes as JSON").check();
    expect(JSON.parse(await item.getByLabel("Config of attributes (JSON)").inputValue())).toEqual({
      actions: [{ key: "env", action: "upsert", value: "prod" }],
    });
    await item.getByLabel("Edit attributes as JSON").uncheck();
    await action.getByLabel(/^Key/).waitFor();
  },
  SLOW,
);

test(
  "a viewer sees the editor read-only",
  async () => {
    const { page } = browser;
    const { inviteUrl } = await server.call<{ inviteUrl: string }>("/users", "POST", { username: "vera", email: "vera@example.com", role: "viewer" });
    await page.goto(inviteUrl);
    await page.getByLabel("New password", { exact: true }).fill("a-long-enough-password");
    await page.getByLabel("Confirm new password").fill("a-long-enough-password");
    await page.getByRole("button", { name: /^Set .*password and sign in$/ }).click();
    await page.waitForURL(/\/ui\/dashboard$/);
    await page.goto(pipelineUrl);
    await page.getByText(/^Read-only/).waitFor();
    await canvasNode(/^Processor Filter \(drop-health-check-logs\)/).waitFor();
    expect(await page.getByRole("button", { name: "Save", exact: true }).count()).toBe(0);
    expect(await page.getByRole("button", { name: /^Add / }).count()).toBe(0);
    expect(await page.getByRole("button", { name: /^(Delete|Remove|Move) / }).count()).toBe(0);
    expect(await page.getByLabel("Conditions of drop-health-check-logs").getAttribute("readonly")).not.toBeNull();
    expect(await page.getByLabel("Config of attributes (JSON)").getAttribute("readonly")).not.toBeNull();
    // Reading is allowed: the dry-run and the preview still work.
    await page.getByRole("region", { name: "Rendered config (OpenTelemetry Collector (OpAMP))" }).waitFor();
    await page.goto(`${server.base}/ui/pipelines`);
    await page.getByRole("row", { name: /web logs/ }).waitFor();
    expect(await page.getByRole("button", { name: "Create pipeline" }).count()).toBe(0);
  },
  SLOW,
);

test("no console or page errors during the run", () => {
  browser.assertClean();
});
