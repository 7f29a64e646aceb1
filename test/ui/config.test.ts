/**
 * Sources, Destinations and Routes in Debian's chromium against the real
 * server: records created through the forms generated from the catalog's
 * schemas (fields found by their labels), listed, edited; an API validation
 * error shown beside the field it names and in the summary; delete behind a
 * confirmation; a route created and edited (each refused beside its field
 * first); a host's discovered service turned into a source in two clicks; a viewer
 * sees the lists without any write control. Desktop and phone screenshots,
 * and no console errors.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { SYSTEM_ACTOR } from "../../server/audit/audit.ts";
import type { Locator } from "playwright-core";
import { startTestServer, type TestServer } from "../harness.ts";
import { openBrowser, phone, type BrowserSession, signIn } from "./browser.ts";

let server: TestServer;
let browser: BrowserSession;
let collectorId: string;
const SLOW = 30_000;
const VIEWER = { username: "vera", password: "viewer-password-8c1f2d" };

/** A host agent that reported an NGINX service, written as the agent channel would (no real agent needed). */
async function hostWithNginx() {
  const { token } = await server.call<{ token: string }>("/enrollment-tokens", "POST", { kind: "agent", maxUses: 1 });
  expect(await server.app.agents.admit(token, "web-1", null)).toMatchObject({ agentId: "web-1" });
  await server.app.agents.discovered("web-1", {
    services: [
      {
        fingerprint: "nginx",
        title: "NGINX",
        evidence: ["process:nginx"],
        pids: [101],
        ports: [80],
        logFiles: ["/var/log/nginx/access.log"],
        pipeline: {
          source: { type: "filelog", config: { include: ["/var/log/nginx/*.log"] } },
          processors: [{ type: "resource", config: { attributes: [{ key: "service.name", action: "insert", value: "nginx" }] } }],
        },
      },
    ],
    collectors: [],
    logSources: [],
  });
  // The registry coalesces writes; wait until the report is readable.
  for (let i = 0; i < 100; i++) {
    const agent = await server.call<{ discovery: unknown }>("/agents/web-1");
    if (agent.discovery !== null) return;
    await Bun.sleep(50);
  }
  throw new Error("the discovery report was not stored");
}

beforeAll(async () => {
  server = await startTestServer();
  browser = await openBrowser({ width: 1280, height: 800 });
  collectorId = (await server.call<{ id: string }>("/collectors", "POST", { name: "edge-1", environment: "prod" })).id;
  await hostWithNginx();
  // The UI admin first: the bootstrap admin is only made while there are no users.
  const admin = await server.uiAdmin();
  await server.app.users.create(SYSTEM_ACTOR, { username: VIEWER.username, email: "vera@example.com", role: "viewer" }, VIEWER.password);
  await signIn(browser.page, server.base, admin, "/ui/sources");
}, SLOW);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const table = (name: string) => browser.page.getByRole("region", { name });
const row = (region: string, text: string) => table(region).locator("tbody tr").filter({ hasText: text });
/** What a screen reader reads with a field: the texts its aria-describedby points at. */
async function description(field: Locator): Promise<string[]> {
  const ids = ((await field.getAttribute("aria-describedby")) ?? "").split(" ").filter((id) => id !== "");
  return Promise.all(ids.map(async (id) => (await browser.page.locator(`[id="${id}"]`).textContent()) ?? ""));
}

/**
 * Moves through the main navigation, as a user would. The page keeps its one
 * live-events stream; a full page load per step would abort one stream each
 * time, and chromium holds aborted streams' sockets for a while.
 */
async function go(page: "Sources" | "Destinations" | "Routes" | "Hosts") {
  await browser.page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: page, exact: true }).click();
}

test(
  "a source is created from the catalog type's generated form and listed",
  async () => {
    const { page } = browser;
    await page.getByText("No sources yet.").waitFor();
    await page.getByRole("note").getByRole("link", { name: "pending changes" }).waitFor();
    await page.getByRole("button", { name: "New source" }).click();
    await page.getByRole("heading", { name: "New source: choose a type" }).waitFor();
    await browser.screenshot("sources-types-1280");
    await phone(browser, "sources-types-390");
    await page.getByRole("button", { name: "Log files" }).click();
    await page.getByRole("heading", { name: "New source: Log files" }).waitFor();

    // Defaults from the schema are filled in; the required list starts with one box.
    expect(await page.getByLabel("Start at").inputValue()).toBe("end");
    await page.getByLabel(/^Name/).fill("app-logs");
    await page.getByLabel("Include 1", { exact: true }).fill("/var/log/app/*.log");
    await page.getByRole("button", { name: "Add include" }).click();
    await page.getByLabel("Include 2", { exact: true }).fill("/var/log/app/**/*.json");
    await page.getByLabel("Start at").selectOption("beginning");
    await browser.screenshot("sources-form-1280");
    await phone(browser, "sources-form-390");
    await page.getByRole("button", { name: "Save" }).click();

    await page.getByText('Created source "app-logs".', { exact: false }).waitFor();
    const created = row("Sources", "app-logs");
    expect(await created.locator("td").first().textContent()).toContain("Log files");
    expect(await created.locator("td").nth(1).textContent()).toContain("include=/var/log/app/*.log, /var/log/app/**/*.json");
    expect(await created.locator("td").nth(1).textContent()).toContain("start_at=beginning");
    expect(await page.getByRole("heading", { name: /New source/ }).count()).toBe(0);
    await browser.screenshot("sources-1280");
    await phone(browser, "sources-390");
  },
  SLOW,
);

test(
  "a destination: the API's validation error sits beside the field it names, then it saves and edits",
  async () => {
    const { page } = browser;
    await go("Destinations");
    await page.getByRole("button", { name: "New destination" }).click();
    // The catalog's runtimes: debug is Runtime O only, and the picker says so; the others say nothing.
    expect(await page.locator("#type-debug-hint").textContent()).toContain("Not available on Alloy (remote config).");
    expect(await page.locator("#type-otlphttp-hint").textContent()).not.toContain("Alloy");
    await page.getByRole("button", { name: "OTLP/HTTP" }).click();
    await page.getByLabel(/^Name/).fill("gateway");
    const endpoint = page.getByLabel("Endpoint");
    await endpoint.fill("not a url");
    await page.getByRole("button", { name: "Add headers" }).click();
    await page.getByLabel("Headers 1 name").fill("X-Team");
    // Header values are secrets unless marked otherwise (test/ui/secrets.test.ts); a team name is not one.
    await page.getByLabel("Headers 1 value kind").selectOption({ label: "Plain text" });
    await page.getByLabel("Headers 1 value", { exact: true }).fill("payments");
    await page.getByRole("button", { name: "Save" }).click();

    // The summary at the top, and the message beside the field (aria-invalid, aria-describedby).
    const summary = page.getByRole("alert").filter({ hasText: "is not valid" });
    await summary.waitFor();
    expect(await summary.textContent()).toContain("config.endpoint: must be an http:// or https:// URL");
    expect(await endpoint.getAttribute("aria-invalid")).toBe("true");
    expect(await description(endpoint)).toContain("must be an http:// or https:// URL");
    expect(await page.getByLabel(/^Name/).getAttribute("aria-invalid")).toBeNull();
    await browser.screenshot("destinations-error-1280");
    await page.emulateMedia({ colorScheme: "dark" });
    await browser.screenshot("destinations-error-dark-1280");
    await page.emulateMedia({ colorScheme: "light" });
    await phone(browser, "destinations-error-390");

    await endpoint.fill("https://gw.example:4318");
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByText('Created destination "gateway".', { exact: false }).waitFor();
    const settings = await row("Destinations", "gateway").locator("td").nth(1).textContent();
    expect(settings).toContain("endpoint=https://gw.example:4318");
    expect(settings).toContain("headers.X-Team=payments");

    await page.getByRole("button", { name: "Edit gateway" }).click();
    await page.getByRole("heading", { name: "Edit destination gateway" }).waitFor();
    expect(await page.getByLabel("Endpoint").inputValue()).toBe("https://gw.example:4318");
    expect(await page.getByLabel("Headers 1 value", { exact: true }).inputValue()).toBe("payments");
    await page.getByLabel(/^Name/).fill("gateway-eu");
    await page.getByRole("button", { name: "Remove Headers 1" }).click();
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByText('Saved destination "gateway-eu".', { exact: false }).waitFor();
    // The form sends the schema's defaults: retries and the queue stay on.
    expect(await row("Destinations", "gateway-eu").locator("td").nth(1).textContent()).toBe(
      "retry_on_failure.enabled=true · sending_queue.enabled=true · endpoint=https://gw.example:4318",
    );
    const stored = await server.call<{ items: { name: string; config: Record<string, unknown> }[] }>("/destinations");
    expect(stored.items.map((d) => [d.name, d.config])).toEqual([
      ["gateway-eu", { endpoint: "https://gw.example:4318", headers: {}, tls: {}, retry_on_failure: { enabled: true }, sending_queue: { enabled: true } }],
    ]);
    await browser.screenshot("destinations-1280");
  },
  SLOW,
);

test(
  "delete asks first: dismissing keeps the record, accepting removes it",
  async () => {
    const { page } = browser;
    await server.call("/destinations", "POST", { name: "scratch", type: "debug", config: {} });
    await row("Destinations", "scratch").waitFor();
    const asking = page.waitForEvent("dialog");
    const click = page.getByRole("button", { name: "Delete scratch" }).click();
    const dialog = await asking;
    expect(dialog.message()).toContain('Delete destination "scratch"?');
    await dialog.dismiss();
    await click;
    expect(await row("Destinations", "scratch").count()).toBe(1);
    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Delete scratch" }).click();
    await page.getByText('Deleted destination "scratch".', { exact: false }).waitFor();
    expect(await row("Destinations", "scratch").count()).toBe(0);
  },
  SLOW,
);

test(
  "a route: refused beside the Source field while the source is inactive, then created, listed and edited",
  async () => {
    const { page } = browser;
    const sources = await server.call<{ items: { id: string; name: string }[] }>("/sources");
    const appLogs = sources.items.find((s) => s.name === "app-logs")!;
    const destination = (await server.call<{ items: { id: string }[] }>("/destinations")).items[0]!;
    await server.call("/pipelines", "POST", {
      name: "app-pipeline",
      signal: "logs",
      topology: {
        nodes: [
          { id: "in", kind: "source" },
          { id: "out", kind: "destination", ref: destination.id },
        ],
        edges: [{ id: "e", source: "in", target: "out" }],
      },
    });

    await go("Routes");
    await page.getByText("No routes yet.").waitFor();
    await page.getByRole("button", { name: "New route" }).click();
    await page.getByLabel("Collector").selectOption({ label: "edge-1 (prod)" });
    await page.getByRole("option", { name: "app-logs (filelog) — not active on this collector" }).waitFor({ state: "attached" });
    await page.getByLabel("Source").selectOption({ label: "app-logs (filelog) — not active on this collector" });
    await page.getByLabel("Pipeline").selectOption({ label: "app-pipeline (logs)" });
    await page.getByRole("button", { name: "Save" }).click();
    const source = page.getByLabel("Source");
    await page.getByRole("alert").filter({ hasText: "The route cannot run" }).waitFor();
    expect(await source.getAttribute("aria-invalid")).toBe("true");
    expect((await description(source)).join(" ")).toContain("is not active on collector");
    await browser.screenshot("routes-form-error-1280");
    await phone(browser, "routes-form-error-390");

    await server.call(`/collectors/${collectorId}/sources`, "POST", { sourceId: appLogs.id });
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByText("Created the route.", { exact: false }).waitFor();
    const created = row("Routes", "edge-1");
    expect((await created.locator("td").allTextContents()).slice(0, 2)).toEqual(["app-logs", "app-pipelinelogs"]);
    await browser.screenshot("routes-1280");
    await phone(browser, "routes-390");

    // Edit: the same form, prefilled; a refusal lands beside Pipeline, then the list shows the saved route.
    const graph = {
      nodes: [
        { id: "in", kind: "source" },
        { id: "out", kind: "destination", ref: destination.id },
      ],
      edges: [{ id: "e", source: "in", target: "out" }],
    };
    await server.call("/pipelines", "POST", { name: "host-metrics", signal: "metrics", topology: graph });
    await server.call("/pipelines", "POST", { name: "audit-pipeline", signal: "logs", topology: graph });
    const route = (await server.call<{ items: { id: string }[] }>("/routes")).items[0]!;
    await page.getByRole("button", { name: `Edit route ${route.id}` }).click();
    await page.getByRole("heading", { name: `Edit route ${route.id}` }).waitFor();
    expect(await page.getByLabel("Pipeline").locator("option:checked").textContent()).toBe("app-pipeline (logs)");
    await page.getByRole("option", { name: "host-metrics (metrics)" }).waitFor({ state: "attached" });
    await page.getByLabel("Pipeline").selectOption({ label: "host-metrics (metrics)" });
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByRole("alert").filter({ hasText: "The route cannot run" }).waitFor();
    const pipelineField = page.getByLabel("Pipeline");
    expect(await pipelineField.getAttribute("aria-invalid")).toBe("true");
    expect((await description(pipelineField)).join(" ")).toContain("carries metrics");
    await page.getByLabel("Pipeline").selectOption({ label: "audit-pipeline (logs)" });
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByText("Saved the route from app-logs to audit-pipeline on edge-1.", { exact: false }).waitFor();
    expect((await row("Routes", "edge-1").locator("td").allTextContents()).slice(0, 2)).toEqual(["app-logs", "audit-pipelinelogs"]);
    const pipelines = await server.call<{ items: { id: string; name: string }[] }>("/pipelines");
    expect((await server.call<{ pipelineId: string }>(`/routes/${route.id}`)).pipelineId).toBe(pipelines.items.find((p) => p.name === "audit-pipeline")!.id);

    // A source a route reads cannot go; the API's reason is shown.
    await go("Sources");
    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: "Delete app-logs" }).click();
    await page.getByRole("alert").filter({ hasText: "is still used by" }).waitFor();
    expect(await row("Sources", "app-logs").count()).toBe(1);
  },
  SLOW,
);

test(
  "a discovered service becomes a source in two clicks: Create source, then Save",
  async () => {
    const { page } = browser;
    await go("Hosts");
    await page.getByRole("link", { name: "web-1" }).click();
    await page.getByRole("link", { name: "Create source for NGINX" }).waitFor();
    await browser.screenshot("hosts-suggestion-1280");
    await page.getByRole("link", { name: "Create source for NGINX" }).click();
    await page.getByRole("heading", { name: "New source: Log files" }).waitFor();
    expect(await page.getByRole("note").filter({ hasText: "Prefilled from the NGINX service found on web-1" }).count()).toBe(1);
    expect(await page.getByLabel(/^Name/).inputValue()).toBe("nginx on web-1");
    expect(await page.getByLabel("Include 1", { exact: true }).inputValue()).toBe("/var/log/nginx/*.log");
    await page.getByRole("button", { name: "Save" }).click();
    await page.getByText('Created source "nginx on web-1".', { exact: false }).waitFor();
    expect(await row("Sources", "nginx on web-1").locator("td").nth(1).textContent()).toContain("include=/var/log/nginx/*.log");
  },
  SLOW,
);

test(
  "a viewer sees the lists and no write controls",
  async () => {
    const { page } = browser;
    await browser.context.clearCookies();
    // Through the session API: a second password-form sign-in only re-tests the login page.
    const session = await browser.context.request.post(`${server.base}/api/v1/session`, { data: VIEWER });
    expect(session.status()).toBe(200);
    await page.goto(`${server.base}/ui/sources`);
    await row("Sources", "app-logs").waitFor();
    const writeButtons = page.getByRole("button", { name: /^(New|Edit|Delete|Save)\b/ });
    expect(await writeButtons.count()).toBe(0);
    expect(await page.getByRole("note").filter({ hasText: "pending changes" }).count()).toBe(0);

    // A link that would open a form opens none for a viewer.
    await page.evaluate(() => {
      history.pushState(null, "", "/ui/sources?new=filelog");
      dispatchEvent(new PopStateEvent("popstate"));
    });
    await row("Sources", "app-logs").waitFor();
    expect(await page.getByRole("heading", { name: /New source/ }).count()).toBe(0);

    await go("Destinations");
    await row("Destinations", "gateway-eu").waitFor();
    expect(await writeButtons.count()).toBe(0);
    await go("Routes");
    await row("Routes", "edge-1").waitFor();
    expect(await writeButtons.count()).toBe(0);
    await browser.screenshot("routes-viewer-1280");
    await go("Hosts");
    await page.getByRole("link", { name: "web-1" }).click();
    await page.getByRole("heading", { name: "Discovered services" }).waitFor();
    await page.getByText("NGINX", { exact: true }).waitFor();
    expect(await page.getByRole("link", { name: /Create source/ }).count()).toBe(0);
    browser.assertClean();
  },
  SLOW,
);
