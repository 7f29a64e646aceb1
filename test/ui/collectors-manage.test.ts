/**
 * Managing collectors from the UI in Debian's chromium against the real
 * server: adding one of each mode (OpAMP ending with its install command,
 * remotecfg with its bootstrap file and own token, shown once), renaming it
 * and setting its environment and tags on its page (an API refusal shown
 * beside the field it names), selecting two in the list and setting their
 * environment at once, a bulk delete with one failure named and retried,
 * deleting after a confirmation (dismissed first: nothing goes), a viewer without any of these controls; the API checked after each
 * step, desktop and phone screenshots, no console errors.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../harness.ts";
import { openBrowser, type BrowserSession, signIn } from "./browser.ts";

let server: TestServer;
let browser: BrowserSession;
const SLOW = 30_000;
const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);

interface Collector {
  id: string;
  name: string;
  environment: string | null;
  managementMode: string;
  tags: Record<string, string>;
}
const byName = async (name: string) => (await call<{ items: Collector[] }>(`/collectors?q=${encodeURIComponent(name)}`)).items.filter((c) => c.name === name);

beforeAll(async () => {
  server = await startTestServer({ SVC_EXTERNALURL: "https://svc.example.com" });
  browser = await openBrowser({ width: 1440, height: 900 });
  await call("/collectors", "POST", { name: "old-box", environment: "prod" });
  await signIn(browser.page, server.base, await server.uiAdmin(), "/ui/collectors");
}, SLOW);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const table = () => browser.page.getByRole("table", { name: "Collectors" });
const row = (name: string) =>
  table()
    .getByRole("row")
    .filter({ has: browser.page.getByRole("link", { name, exact: true }) });

async function add(fields: { name: string; environment: string; tags: string; mode: RegExp; show: RegExp }) {
  const { page } = browser;
  await page.getByRole("button", { name: "Add collector" }).click();
  const form = page.getByRole("form", { name: "Add a collector" });
  await form.getByLabel("Name").fill(fields.name);
  await form.getByLabel("Environment").fill(fields.environment);
  await form.getByLabel("Tags").fill(fields.tags);
  await form.getByRole("radio", { name: fields.mode }).check();
  await form.getByRole("radio", { name: fields.show }).check();
  await form.getByRole("button", { name: "Add collector" }).click();
}

test(
  "an OpAMP collector is added and ends with its install command",
  async () => {
    const { page } = browser;
    await add({ name: "edge-otel", environment: "prod", tags: "team=payments", mode: /^OpenTelemetry Collector \(OpAMP\)/, show: /install command/ });
    const box = page.getByLabel("Install command for edge-otel");
    await box.waitFor();
    const snippet = await box.inputValue();
    expect(snippet).toContain("https://svc.example.com/downloads/install.sh");
    await page.getByText("Shown once: the command holds a new token.").waitFor();
    const [made] = await byName("edge-otel");
    expect(made).toMatchObject({ environment: "prod", managementMode: "opamp", tags: { team: "payments" } });
    // The command's enrollment token is bound to this collector.
    const tokens = await call<{ items: { collectorId: string | null; kind: string }[] }>("/enrollment-tokens");
    expect(tokens.items.filter((t) => t.collectorId === made!.id && t.kind === "opamp")).toHaveLength(1);
    await browser.screenshot("collectors-add-opamp-1440");
    await page.getByRole("button", { name: "Done" }).click();
    await row("edge-otel").waitFor();
  },
  SLOW,
);

test(
  "a remotecfg collector is added and ends with its bootstrap file holding its own token",
  async () => {
    const { page } = browser;
    await add({ name: "edge-alloy", environment: "prod", tags: "", mode: /^Alloy \(remote config\)/, show: /bootstrap files/ });
    const file = page.getByRole("region", { name: "/etc/rcfg-runtime/config.rcfg" });
    await file.waitFor();
    const body = await file.locator("pre").textContent();
    const token = /svcct_[A-Za-z0-9_-]+/.exec(body ?? "")?.[0];
    expect(token).toBeDefined();
    await page.getByText("1 file for Alloy (remote config). Shown once: the files hold a new token.").waitFor();
    const [made] = await byName("edge-alloy");
    expect(made?.managementMode).toBe("rcfg-remotecfg");
    // The file's token is the collector's current one: the server renders the same file for it.
    const again = await call<{ runtime: string; files: { body: string }[] }>("/bootstrap-files", "POST", { token });
    expect(again.runtime).toBe("alloy");
    expect(again.files[0]!.body).toBe(body!);
    await browser.screenshot("collectors-add-remotecfg-1440");
    await page.getByRole("button", { name: "Done" }).click();
  },
  SLOW,
);

test(
  "a collector is renamed and given an environment and tags on its page; the list follows",
  async () => {
    const { page } = browser;
    await row("edge-otel").getByRole("link").click();
    const form = page.getByRole("form", { name: "Collector settings" });
    // A blank name is refused by the API, which names the field; the error sits beside it.
    await form.getByLabel("Name").fill("   ");
    await form.getByRole("button", { name: "Save" }).click();
    await page.locator("#edit-name-error").waitFor();
    expect(await form.getByLabel("Name").getAttribute("aria-invalid")).toBe("true");
    await form.getByLabel("Tags").fill("team=payments, broken");
    await form.getByLabel("Name").fill("edge-otel-1");
    await form.getByRole("button", { name: "Save" }).click();
    expect(await page.locator("#edit-tags-error").textContent()).toBe('"broken" is not key=value');
    await form.getByLabel("Environment").fill("staging");
    await form.getByLabel("Tags").fill("team=payments, tier=edge");
    await form.getByRole("button", { name: "Save" }).click();
    await page.getByRole("heading", { name: "edge-otel-1", level: 1 }).waitFor();
    await page.getByText("Saved.").waitFor();
    const [saved] = await byName("edge-otel-1");
    expect(saved).toMatchObject({ environment: "staging", tags: { team: "payments", tier: "edge" } });
    await browser.screenshot("collector-settings-1440");
    // A debug destination active on it cannot run on Alloy: the API refuses the mode change, naming managementMode.
    const debug = await call<{ id: string }>("/destinations", "POST", { name: "dbg", type: "debug", config: {} });
    await call(`/collectors/${saved!.id}/destinations`, "POST", { destinationId: debug.id, configOverrides: {} });
    await form.getByLabel("Management").selectOption("rcfg-remotecfg");
    await form.getByRole("button", { name: "Save" }).click();
    await page.locator("#edit-mode-error").getByText('active destination "dbg" (debug) cannot run there', { exact: false }).waitFor();
    expect(await form.getByLabel("Management").getAttribute("aria-invalid")).toBe("true");
    expect((await byName("edge-otel-1"))[0]!.managementMode).toBe("opamp");
    await call(`/collectors/${saved!.id}/destinations/${debug.id}`, "DELETE");
    await page.getByRole("link", { name: "← All collectors" }).click();
    const listed = row("edge-otel-1");
    await listed.getByText("staging").waitFor();
    await listed.getByText("tier=edge").waitFor();
  },
  SLOW,
);

test(
  "two selected collectors get an environment in one action, with progress",
  async () => {
    const { page } = browser;
    await row("edge-otel-1").getByRole("checkbox", { name: "Select edge-otel-1" }).check();
    await row("edge-alloy").getByRole("checkbox", { name: "Select edge-alloy" }).check();
    const bar = page.getByRole("region", { name: "2 selected" });
    await bar.getByRole("textbox", { name: "Environment" }).fill("qa");
    await bar.getByRole("button", { name: "Set environment" }).click();
    await page.getByText("Setting environment qa: 2 of 2 done.").waitFor();
    for (const name of ["edge-otel-1", "edge-alloy"]) {
      expect((await byName(name))[0]!.environment).toBe("qa");
      await row(name).getByText("qa", { exact: true }).waitFor();
    }
    expect((await byName("old-box"))[0]!.environment).toBe("prod");
    // Done ones leave the selection; the bar keeps the outcome until dismissed.
    const outcome = page.getByRole("region", { name: "Last bulk action" });
    await outcome.getByRole("button", { name: "Dismiss" }).click();
    await outcome.waitFor({ state: "detached" });
    // Select all, then a tag for every loaded collector.
    await table().getByRole("checkbox", { name: "Select all loaded collectors" }).check();
    const all = page.getByRole("region", { name: "3 selected" });
    await all.getByRole("textbox", { name: "Tags to set" }).fill("fleet=eu");
    await all.getByRole("button", { name: "Set tags" }).click();
    await page.getByText("Setting tags fleet=eu: 3 of 3 done (3 changed).").waitFor();
    const everyone = (await call<{ items: Collector[] }>("/collectors")).items;
    expect(everyone.map((c) => c.tags.fleet)).toEqual(["eu", "eu", "eu"]);
    expect(everyone.find((c) => c.name === "edge-otel-1")!.tags).toEqual({ team: "payments", tier: "edge", fleet: "eu" });
    // Live events bring the new tag into every row.
    for (const c of everyone) await row(c.name).getByText("fleet=eu").waitFor();
    await browser.screenshot("collectors-bulk-1440");
  },
  SLOW,
);

test(
  "a bulk delete asks first, names each collector that failed, and keeps those selected for a retry",
  async () => {
    const { page } = browser;
    await call("/collectors", "POST", { name: "tmp-a" });
    const stuck = await call<{ id: string }>("/collectors", "POST", { name: "tmp-b" });
    await page.reload();
    await row("tmp-b").waitFor();
    await row("tmp-a").getByRole("checkbox").check();
    await row("tmp-b").getByRole("checkbox").check();
    // One DELETE answers an error, as a server refusing it would.
    const refused = `**/api/v1/collectors/${stuck.id}`;
    await page.route(refused, (r) =>
      r.request().method() === "DELETE"
        ? r.fulfill({
            status: 409,
            contentType: "application/json",
            body: JSON.stringify({ error: { code: "conflict", message: "held by a test", details: [] } }),
          })
        : r.fallback(),
    );
    let asked = "";
    page.once("dialog", (dialog) => {
      asked = dialog.message();
      void dialog.accept();
    });
    await page.getByRole("region", { name: "2 selected" }).getByRole("button", { name: "Delete selected" }).click();
    await page.getByText("Deleting: 2 of 2 done, 1 failed.").waitFor();
    expect(asked).toContain("Delete 2 collectors?");
    expect(await page.getByRole("list", { name: "Failures" }).innerText()).toBe("tmp-b: held by a test");
    expect(await byName("tmp-a")).toHaveLength(0);
    expect(await byName("tmp-b")).toHaveLength(1);
    await row("tmp-a").waitFor({ state: "detached" });
    // The failed one is still selected: retried, it goes.
    await page.unroute(refused);
    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("region", { name: "1 selected" }).getByRole("button", { name: "Delete selected" }).click();
    await page.getByText("Deleting: 1 of 1 done.").waitFor();
    expect(await byName("tmp-b")).toHaveLength(0);
  },
  SLOW,
);

test(
  "deleting asks first: dismissed keeps the collector, accepted removes it",
  async () => {
    const { page } = browser;
    const [target] = await byName("old-box");
    await page.goto(`${server.base}/ui/collectors/${target!.id}`);
    const remove = page.getByRole("button", { name: "Delete collector" });
    page.once("dialog", (dialog) => void dialog.dismiss());
    await remove.click();
    expect((await byName("old-box")).length).toBe(1);
    let asked = "";
    page.once("dialog", (dialog) => {
      asked = dialog.message();
      void dialog.accept();
    });
    await remove.click();
    await page.waitForURL((url) => url.pathname === "/ui/collectors");
    expect(asked).toContain("Delete collector old-box?");
    const res = await server.api(`/collectors/${target!.id}`);
    expect(res.status).toBe(404);
    await page.getByText("Showing 2 collectors.").waitFor();
  },
  SLOW,
);

test(
  "a viewer sees the list and a collector without add, select, settings or delete",
  async () => {
    const invited = await call<{ inviteUrl: string }>("/users", "POST", { username: "vic", email: "vic@example.com", role: "viewer" });
    const token = new URL(invited.inviteUrl).searchParams.get("token")!;
    const viewer = await openBrowser({ width: 1440, height: 900 });
    try {
      const res = await viewer.context.request.post(`${server.base}/api/v1/session/invite`, { data: { token, password: "viewer-password-123" } });
      expect(res.status()).toBe(200);
      await viewer.page.goto(`${server.base}/ui/collectors`);
      await viewer.page.getByText("Showing 2 collectors.").waitFor();
      expect(await viewer.page.getByRole("button", { name: "Add collector" }).count()).toBe(0);
      expect(await viewer.page.getByRole("checkbox").count()).toBe(0);
      const [one] = await byName("edge-alloy");
      await viewer.page.goto(`${server.base}/ui/collectors/${one!.id}`);
      await viewer.page.getByRole("heading", { name: "edge-alloy", level: 1 }).waitFor();
      expect(await viewer.page.getByRole("form", { name: "Collector settings" }).count()).toBe(0);
      expect(await viewer.page.getByRole("button", { name: "Delete collector" }).count()).toBe(0);
      viewer.assertClean();
    } finally {
      await viewer.close();
    }
  },
  SLOW,
);

test(
  "the add flow, settings and bulk bar fit a 390 px phone",
  async () => {
    const { page } = browser;
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`${server.base}/ui/collectors`);
    await page.getByText("Showing 2 collectors.").waitFor();
    await row("edge-alloy").getByRole("checkbox").check();
    await page.getByRole("button", { name: "Add collector" }).click();
    await page.getByRole("form", { name: "Add a collector" }).waitFor();
    const overflow = () => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(await overflow()).toBe(0);
    await browser.screenshot("collectors-manage-390");
    const [one] = await byName("edge-alloy");
    await page.goto(`${server.base}/ui/collectors/${one!.id}`);
    await page.getByRole("form", { name: "Collector settings" }).waitFor();
    expect(await overflow()).toBe(0);
    await browser.screenshot("collector-settings-390");
    await page.setViewportSize({ width: 1440, height: 900 });
  },
  SLOW,
);

test("no console or page errors during the run", () => {
  browser.assertClean();
});
