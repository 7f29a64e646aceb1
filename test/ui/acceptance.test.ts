/**
 * The web UI's acceptance flow end to end, in Debian's chromium against the
 * real server, a real OpAMP client and real host agents, everything done the
 * way an operator would in the UI: sign in; create a source and a
 * destination from the catalog forms; build a pipeline on the canvas with
 * the health-check filter; dry-run a mixed input and see only the
 * non-health records in Final output; activate and route on the collector;
 * commit, publish, and watch the OpAMP client turn current; change the
 * source, publish again, and roll the collector back; browse a log
 * directory through a running agent; see the disabled-browsing message.
 * No console errors.
 */
import type { Subprocess } from "bun";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startTestServer, type TestServer } from "../harness.ts";
import { applied, description, RawAgent } from "../opamp/helpers.ts";
import { startAgent, stopAgents, untilConnected } from "./agents.ts";
import { createLogSourceAndBackend, createLogsPipeline, goTo, openBrowser, signIn, type BrowserSession } from "./browser.ts";

let server: TestServer;
let browser: BrowserSession;
let collector: RawAgent;
let collectorId: string;
let dir: string;
let tree: string;
const agents: Subprocess[] = [];
const SLOW = 45_000;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "svc-ui-acceptance-"));
  mkdirSync(join(dir, "logs", "app"), { recursive: true });
  tree = realpathSync(join(dir, "logs"));
  writeFileSync(join(tree, "app", "service.log"), "started\nGET /api/orders 200\n");

  server = await startTestServer();
  const { id } = await server.call<{ id: string }>("/collectors", "POST", { name: "edge-1", environment: "prod" });
  collectorId = id;
  const { token } = await server.call<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp", collectorId });
  collector = await RawAgent.connect(`${server.base.replace(/^http/, "ws")}/v1/opamp`, token);
  await collector.call({ agentDescription: description({ "service.name": "edge-1" }) });

  const agentToken = await server.call<{ token: string }>("/enrollment-tokens", "POST", { kind: "agent", maxUses: 2 });
  agents.push(startAgent(server, dir, "web-1", agentToken.token, `  allowedRoots: [${tree}]`));
  agents.push(startAgent(server, dir, "locked-1", agentToken.token, "  enabled: false"));

  browser = await openBrowser({ width: 1280, height: 800 });
  browser.page.setDefaultTimeout(15_000);
  // The UI asks before a rollback; the operator says yes.
  browser.page.on("dialog", (dialog) => void dialog.accept());
  await Promise.all([untilConnected(server, "web-1"), untilConnected(server, "locked-1")]);
}, 60_000);

afterAll(async () => {
  collector?.close();
  await stopAgents(agents);
  await browser?.close();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Moves by the main navigation, as a user would (the page keeps its one live-events stream). */
const go = (label: string) => goTo(browser.page, label);

test(
  "sign in",
  async () => {
    const admin = await server.uiAdmin();
    const { page } = browser;
    await signIn(page, server.base, admin, "/ui/system");
  },
  SLOW,
);

test(
  "a source and a destination are created from the catalog forms",
  async () => {
    await createLogSourceAndBackend(browser.page, "app-logs");
  },
  SLOW,
);

test(
  "a pipeline is built on the canvas with the health-check filter",
  async () => {
    const { page } = browser;
    await go("Pipelines");
    await createLogsPipeline(page, "web logs");
    const canvas = page.getByRole("group", { name: "Pipeline canvas" });
    await page.getByRole("button", { name: "Add source app-logs" }).dragTo(canvas, { targetPosition: { x: 120, y: 200 } });
    await page.getByRole("button", { name: "Add processor Drop Health Check Logs" }).dragTo(canvas, { targetPosition: { x: 420, y: 200 } });
    await page.getByRole("button", { name: "Add destination backend" }).dragTo(canvas, { targetPosition: { x: 720, y: 200 } });
    await canvas.getByRole("group", { name: /^Processor Filter \(drop-health-check-logs\)/ }).waitFor();
    for (const [from, to] of [
      ["app-logs", "drop-health-check-logs"],
      ["drop-health-check-logs", "backend"],
    ] as const) {
      await page.getByLabel("From", { exact: true }).selectOption(from);
      await page.getByLabel("To", { exact: true }).selectOption(to);
      await page.getByRole("button", { name: "Connect" }).click();
    }
    await page
      .getByRole("region", { name: /^Problems/ })
      .getByRole("heading", { name: "Problems (0)" })
      .waitFor({ state: "attached" });
    await page.getByRole("button", { name: "Auto-layout" }).click();
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await page.getByRole("status").getByText("Saved", { exact: true }).waitFor();
    await browser.screenshot("acceptance-pipeline-1280");
  },
  SLOW,
);

test(
  "a dry-run of mixed input keeps only the non-health records in Final output",
  async () => {
    const { page } = browser;
    await page.getByRole("button", { name: "Load mixed sample" }).click();
    await page.getByRole("button", { name: "Run" }).click();
    const output = page.getByRole("region", { name: "Final output" });
    await output.getByRole("listitem").first().waitFor();
    const records = await output.getByRole("listitem").locator("code").allTextContents();
    expect(records.length).toBeGreaterThan(0);
    for (const record of records) expect(record).not.toMatch(/\/(healthz|health|livez|ping)\b/);
    const input = await page.getByLabel(/OTLP JSON/).inputValue();
    expect(input).toContain("/healthz"); // the input did hold health checks
  },
  SLOW,
);

test(
  "the source and destination are activated on the collector and routed through the pipeline",
  async () => {
    const { page } = browser;
    await go("Collectors");
    await page.getByRole("link", { name: "edge-1" }).click();
    await page.getByRole("heading", { level: 1, name: "edge-1" }).waitFor();
    const sources = page.getByRole("region", { name: "Sources" });
    await sources.getByLabel("Source", { exact: true }).selectOption({ label: "app-logs (filelog)" });
    await sources.getByRole("button", { name: "Activate source" }).click();
    await sources.getByRole("button", { name: "Deactivate app-logs" }).waitFor();
    const destinations = page.getByRole("region", { name: "Destinations" });
    await destinations.getByLabel("Destination", { exact: true }).selectOption({ label: "backend (otlphttp)" });
    await destinations.getByRole("button", { name: "Activate destination" }).click();
    await destinations.getByRole("button", { name: "Deactivate backend" }).waitFor();

    await go("Routes");
    await page.getByRole("button", { name: "New route" }).click();
    await page.getByLabel("Collector").selectOption({ label: "edge-1 (prod)" });
    await page.getByLabel("Source").selectOption({ label: "app-logs (filelog)" });
    await page.getByLabel("Pipeline").selectOption({ label: "web logs (logs)" });
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await page.getByText("Created the route.", { exact: false }).waitFor();
  },
  SLOW,
);

/** Commits what is pending with `message` and publishes to all after its plan; returns the config the collector was sent. */
async function commitAndPublish(message: string) {
  const { page } = browser;
  await go("Changes");
  const form = page.getByRole("form", { name: "Commit pending changes" });
  await form.getByLabel("Commit message").fill(message);
  await form.getByRole("button", { name: "Commit" }).click();
  await page.getByText("No pending changes.").waitFor();
  const pushed = collector.next((m) => m.remoteConfig !== undefined, 15_000);
  await page.getByRole("button", { name: "Review and publish" }).click();
  await page.getByRole("form", { name: "Publish plan" }).getByRole("button", { name: "Confirm and publish" }).click();
  const sent = await pushed;
  return { hash: sent.remoteConfig!.configHash, body: new TextDecoder().decode(sent.remoteConfig!.config!.configMap[""]!.body) };
}

/** The rollout progress region's count for one config state. */
async function countOf(state: string): Promise<string | null> {
  const { page } = browser;
  const progress = page.getByRole("region", { name: "Rollout progress" });
  return progress
    .locator("div", { has: page.getByRole("term").getByText(state, { exact: true }) })
    .getByRole("definition")
    .textContent();
}

test(
  "commit and publish: the OpAMP client is sent the filtered pipeline and turns current",
  async () => {
    const { page } = browser;
    const first = await commitAndPublish("Ship app logs without health checks");
    expect(first.body).toContain("/var/log/app/*.log");
    expect(first.body).toContain("healthz");
    await collector.call({ remoteConfigStatus: applied(first.hash) });
    const progress = page.getByRole("region", { name: "Rollout progress" });
    await progress.getByText("Completed", { exact: true }).waitFor();
    expect(await countOf("current")).toBe("1");
    await browser.screenshot("acceptance-rollout-1280");
  },
  SLOW,
);

test(
  "after a second publish, the collector is rolled back to the first config",
  async () => {
    const { page } = browser;
    await go("Sources");
    await page.getByRole("button", { name: "Edit app-logs" }).click();
    await page.getByLabel("Include 1", { exact: true }).fill("/var/log/app/v2/*.log");
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await page.getByText('Saved source "app-logs".', { exact: false }).waitFor();
    const second = await commitAndPublish("Read the v2 log directory");
    expect(second.body).toContain("/var/log/app/v2/*.log");
    await collector.call({ remoteConfigStatus: applied(second.hash) });
    await page.getByRole("region", { name: "Rollout progress" }).getByText("Completed", { exact: true }).waitFor();

    await go("Collectors");
    await page.getByRole("link", { name: "edge-1" }).click();
    const pushed = collector.next((m) => m.remoteConfig !== undefined, 15_000);
    await page.getByRole("button", { name: "Roll back to version 1" }).click();
    await page
      .getByRole("status")
      .getByText(/Rolled back to version 1/)
      .waitFor();
    const rolledBack = await pushed;
    const body = new TextDecoder().decode(rolledBack.remoteConfig!.config!.configMap[""]!.body);
    expect(body).toContain("/var/log/app/*.log");
    expect(body).not.toContain("/v2/");
    await collector.call({ remoteConfigStatus: applied(rolledBack.remoteConfig!.configHash) });
    const history = page.getByRole("region", { name: "Config history" });
    const newest = history.getByRole("row", { name: /Version 3/ });
    await newest.waitFor();
    expect(await newest.textContent()).toContain("rollback to version 1");
    await browser.screenshot("acceptance-rollback-1280");
  },
  SLOW,
);

test(
  "a log directory is browsed through the running agent",
  async () => {
    const { page } = browser;
    await go("Hosts");
    await page.getByRole("region", { name: "Hosts" }).locator("tbody tr").filter({ hasText: "web-1" }).getByRole("link").click();
    const listing = page.getByRole("region", { name: "Directory listing" });
    await listing.getByRole("button", { name: "app/" }).click();
    await listing.getByRole("button", { name: "service.log" }).click();
    const content = page.getByLabel(`Content of ${join(tree, "app", "service.log")}`);
    await content.waitFor();
    expect(await content.textContent()).toContain("GET /api/orders 200");
    await browser.screenshot("acceptance-browse-1280");
  },
  SLOW,
);

test(
  "an agent with browsing off shows the disabled-browsing message",
  async () => {
    const { page } = browser;
    await go("Hosts");
    await page.getByRole("region", { name: "Hosts" }).locator("tbody tr").filter({ hasText: "locked-1" }).getByRole("link").click();
    const alert = page.getByRole("alert").filter({ hasText: "log browsing" });
    await alert.waitFor();
    expect((await alert.textContent())?.trim()).toBe("log browsing is disabled by agent configuration");
  },
  SLOW,
);

test("no console or page errors during the run", () => {
  browser.assertClean();
});
