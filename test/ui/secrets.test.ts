/**
 * Sensitive header values in Debian's chromium against the real server: a
 * stored secret shows as "Set · changed …" with Replace and Clear and its
 * text never reaches the page; saving without touching it sends its read
 * form back, which keeps it; Replace sends a new value typed into a
 * write-only box; Clear removes the header; a new header is a Secret unless
 * changed to plain text (warned when named like a credential) or to the
 * collector's environment (the name checked before anything is sent). A
 * collector's header overrides get the same editor, and a viewer sees only
 * "(secret)"; the Changes page says a secret changed, never to what. The
 * request bodies the page sends are read off the wire.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Locator, Request } from "playwright-core";
import { SYSTEM_ACTOR } from "../../server/audit/audit.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { openBrowser, phone, signIn, type BrowserSession } from "./browser.ts";

let server: TestServer;
let browser: BrowserSession;
let collectorId: string;
let vendorId: string;
const SLOW = 30_000;
const VIEWER = { username: "vera", password: "viewer-password-5e2a9c" };
/** The stored Authorization value, then its replacement and a collector's own: none may ever be on a page. */
const PLAINTEXT = "Bearer sk-live-7f3a9c2e-first";
const REPLACED = "Bearer sk-live-b81d44aa-second";
const EDGE_ONLY = "Bearer sk-edge-1-c0ffee";
const SET_TEXT = /^Set · changed (now|\d+ seconds? ago)$/;

interface Summary {
  secret: true;
  set: true;
  updatedAt: string;
}
interface Destination {
  id: string;
  name: string;
  config: { endpoint?: string; headers?: Record<string, unknown> };
}

beforeAll(async () => {
  server = await startTestServer();
  browser = await openBrowser({ width: 1280, height: 800 });
  collectorId = (await server.call<{ id: string }>("/collectors", "POST", { name: "edge-1", environment: "prod" })).id;
  // The three forms a header value takes on a write: a new secret (a string), plain text, the collector's environment.
  vendorId = (
    await server.call<Destination>("/destinations", "POST", {
      name: "vendor",
      type: "otlphttp",
      config: {
        endpoint: "https://otlp.vendor.example",
        headers: { Authorization: PLAINTEXT, "X-Scope-OrgID": { value: "tenant-a", secret: false }, "X-Api-Key": { env: "VENDOR_KEY" } },
      },
    })
  ).id;
  const admin = await server.uiAdmin();
  await server.app.users.create(SYSTEM_ACTOR, { username: VIEWER.username, email: "vera@example.com", role: "viewer" }, VIEWER.password);
  await signIn(browser.page, server.base, admin, "/ui/destinations");
}, SLOW);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

const vendor = () => server.call<Destination>(`/destinations/${vendorId}`);
const row = (name: string) => browser.page.getByRole("region", { name: "Destinations" }).locator("tbody tr").filter({ hasText: name });

/** Nothing on the page (markup, and every control's current value) carries any plaintext of a secret. */
async function expectNoPlaintext() {
  const { page } = browser;
  const html = await page.content();
  const values = await page.locator("input, textarea, select").evaluateAll((controls) => controls.map((c) => (c as HTMLInputElement).value));
  for (const secret of [PLAINTEXT, REPLACED, EDGE_ONLY]) {
    expect(html).not.toContain(secret);
    expect(values.filter((v) => v.includes(secret))).toEqual([]);
  }
}

/** The number of the header row named `name` in the form inside `scope` (rows are "Headers 1", "Headers 2", …). */
async function headerRow(scope: Locator, name: string): Promise<number> {
  const names = await scope.getByLabel(/^Headers \d+ name$/).evaluateAll((inputs) => inputs.map((i) => (i as HTMLInputElement).value));
  const index = names.indexOf(name);
  if (index === -1) throw new Error(`no header row named ${name} (rows: ${names.join(", ")})`);
  return index + 1;
}

/** The JSON body of the next write the page sends whose URL contains `path`. */
function nextWrite(path: string): Promise<Request> {
  return browser.page.waitForRequest((r) => r.method() !== "GET" && r.url().includes(path));
}

test(
  "a stored secret shows as set with Replace and Clear, never its text; saving other fields sends it back and keeps it",
  async () => {
    const { page } = browser;
    const before = (await vendor()).config.headers!.Authorization as Summary;
    expect(before).toEqual({ secret: true, set: true, updatedAt: expect.any(String) });

    const settings = await row("vendor").locator("td").nth(1).textContent();
    expect(settings).toContain("headers.Authorization=(secret)");
    expect(settings).toContain("headers.X-Api-Key=(host env VENDOR_KEY)");
    expect(settings).toContain("headers.X-Scope-OrgID=tenant-a");

    await page.getByRole("button", { name: "Edit vendor" }).click();
    const form = page.getByRole("form", { name: "Edit destination vendor" });
    await form.waitFor();
    const auth = await headerRow(form, "Authorization");
    expect(await form.getByLabel(`Headers ${auth} value kind`).inputValue()).toBe("secret");
    expect((await form.locator(`#component-config-headers-${auth - 1}-value`).textContent())!).toMatch(SET_TEXT);
    await form.getByRole("button", { name: `Replace Headers ${auth} value` }).waitFor();
    await form.getByRole("button", { name: `Clear Headers ${auth} value` }).waitFor();
    // The stored secret has no box at all: nothing to read back, nothing to autofill.
    expect(await form.getByLabel(`Headers ${auth} value`, { exact: true }).count()).toBe(0);

    const org = await headerRow(form, "X-Scope-OrgID");
    expect(await form.getByLabel(`Headers ${org} value kind`).inputValue()).toBe("plain");
    expect(await form.getByLabel(`Headers ${org} value`, { exact: true }).inputValue()).toBe("tenant-a");
    const key = await headerRow(form, "X-Api-Key");
    expect(await form.getByLabel(`Headers ${key} value kind`).inputValue()).toBe("env");
    expect(await form.getByLabel(`Headers ${key} value: environment variable`).inputValue()).toBe("VENDOR_KEY");
    // Only a plain value named like a credential warns; these are not.
    expect(await form.locator(".secret-warning").count()).toBe(0);
    await expectNoPlaintext();
    await browser.screenshot("secrets-stored-1280");
    await phone(browser, "secrets-stored-390");

    // Other fields and another header change; the secret's row is left alone.
    await page.getByLabel("Endpoint").fill("https://otlp.eu.vendor.example");
    await form.getByLabel(`Headers ${org} value`, { exact: true }).fill("tenant-b");
    const sent = nextWrite(`/destinations/${vendorId}`);
    await form.getByRole("button", { name: "Save" }).click();
    const body = (await sent).postDataJSON() as Destination;
    expect(body.config.headers).toEqual({ Authorization: before, "X-Scope-OrgID": { value: "tenant-b", secret: false }, "X-Api-Key": { env: "VENDOR_KEY" } });
    await page.getByText('Saved destination "vendor".', { exact: false }).waitFor();

    const after = await vendor();
    expect(after.config.endpoint).toBe("https://otlp.eu.vendor.example");
    // Kept: the same stored version, so the same time.
    expect(after.config.headers!.Authorization).toEqual(before);
    await expectNoPlaintext();
  },
  SLOW,
);

test(
  "Replace takes a new value in a write-only box (Keep current backs out); Clear removes the header (Undo backs out)",
  async () => {
    const { page } = browser;
    const before = (await vendor()).config.headers!.Authorization as Summary;
    await page.getByRole("button", { name: "Edit vendor" }).click();
    const form = page.getByRole("form", { name: "Edit destination vendor" });
    const auth = await headerRow(form, "Authorization");
    const box = form.getByLabel(`Headers ${auth} value`, { exact: true });

    await form.getByRole("button", { name: `Replace Headers ${auth} value` }).click();
    expect(await box.getAttribute("type")).toBe("password");
    expect(await box.getAttribute("autocomplete")).toBe("new-password");
    expect(await box.inputValue()).toBe("");
    expect(await box.evaluate((input) => input === document.activeElement)).toBe(true);
    // Emptied while replacing, it would be an empty secret: the browser will not submit it.
    expect(await box.evaluate((input) => (input as HTMLInputElement).validity.valueMissing)).toBe(true);
    await form.getByRole("button", { name: `Keep current Headers ${auth} value` }).click();
    expect((await form.locator(`#component-config-headers-${auth - 1}-value`).textContent())!).toMatch(SET_TEXT);

    await form.getByRole("button", { name: `Replace Headers ${auth} value` }).click();
    await box.fill(REPLACED);
    await browser.screenshot("secrets-replace-1280");
    let sent = nextWrite(`/destinations/${vendorId}`);
    await form.getByRole("button", { name: "Save" }).click();
    expect(((await sent).postDataJSON() as Destination).config.headers!.Authorization).toBe(REPLACED);
    await page.getByText('Saved destination "vendor".', { exact: false }).waitFor();
    const replaced = (await vendor()).config.headers!.Authorization as Summary;
    expect(replaced).toEqual({ secret: true, set: true, updatedAt: expect.any(String) });
    expect(Date.parse(replaced.updatedAt)).toBeGreaterThan(Date.parse(before.updatedAt));
    expect(await row("vendor").locator("td").nth(1).textContent()).toContain("headers.Authorization=(secret)");
    await expectNoPlaintext();

    // The pending change reads as a secret's new version, and nothing more.
    await page.getByRole("link", { name: "Changes", exact: true }).click();
    await page.getByText("secret changed (values are never shown)").first().waitFor();
    await expectNoPlaintext();
    await page.getByRole("link", { name: "Destinations", exact: true }).click();

    await page.getByRole("button", { name: "Edit vendor" }).click();
    await form.getByRole("button", { name: `Clear Headers ${auth} value` }).click();
    const cleared = form.locator(`#component-config-headers-${auth - 1}-value`);
    expect(await cleared.textContent()).toBe("Cleared: saving removes it.");
    await form.getByRole("button", { name: `Undo clearing Headers ${auth} value` }).click();
    expect((await cleared.textContent())!).toMatch(SET_TEXT);
    await form.getByRole("button", { name: `Clear Headers ${auth} value` }).click();
    sent = nextWrite(`/destinations/${vendorId}`);
    await form.getByRole("button", { name: "Save" }).click();
    expect(Object.keys(((await sent).postDataJSON() as Destination).config.headers!).sort()).toEqual(["X-Api-Key", "X-Scope-OrgID"]);
    await page.getByText('Saved destination "vendor".', { exact: false }).waitFor();
    expect(Object.keys((await vendor()).config.headers!).sort()).toEqual(["X-Api-Key", "X-Scope-OrgID"]);
    expect(await row("vendor").locator("td").nth(1).textContent()).not.toContain("Authorization");
  },
  SLOW,
);

test(
  "a new header is a Secret; plain text named like a credential warns; an environment variable's name is checked before sending",
  async () => {
    const { page } = browser;
    await page.getByRole("button", { name: "New destination" }).click();
    await page.getByRole("button", { name: "OTLP/HTTP" }).click();
    const form = page.getByRole("form", { name: "New destination: OTLP/HTTP" });
    await page.getByLabel(/^Name/).fill("gateway");
    await page.getByLabel("Endpoint").fill("https://gw.example:4318");

    await form.getByRole("button", { name: "Add headers" }).click();
    expect(await form.getByLabel("Headers 1 value kind").inputValue()).toBe("secret");
    expect(await form.getByLabel("Headers 1 value", { exact: true }).getAttribute("type")).toBe("password");
    await form.getByLabel("Headers 1 name").fill("X-Auth-Token");
    await form.getByLabel("Headers 1 value kind").selectOption({ label: "Plain text" });
    const plain = form.getByLabel("Headers 1 value", { exact: true });
    await plain.fill("abc-123");
    expect(await plain.getAttribute("type")).toBeNull();
    const warning = form.locator(".secret-warning");
    expect(await warning.textContent()).toContain("“X-Auth-Token” looks like a credential");
    expect((await plain.getAttribute("aria-describedby"))!.split(" ")).toContain((await warning.getAttribute("id"))!);
    // Back to Secret: the text typed so far moves into the write-only box, and the warning goes.
    await form.getByLabel("Headers 1 value kind").selectOption({ label: "Secret" });
    expect(await form.getByLabel("Headers 1 value", { exact: true }).getAttribute("type")).toBe("password");
    expect(await form.getByLabel("Headers 1 value", { exact: true }).inputValue()).toBe("abc-123");
    expect(await warning.count()).toBe(0);

    // Case does not matter to the warning.
    await form.getByRole("button", { name: "Add headers" }).click();
    await form.getByLabel("Headers 2 name").fill("x-api-key");
    await form.getByLabel("Headers 2 value kind").selectOption({ label: "Plain text" });
    expect(await warning.textContent()).toContain("“x-api-key” looks like a credential");
    await browser.screenshot("secrets-warning-1280");
    await form.getByLabel("Headers 2 value kind").selectOption({ label: "From the collector's environment" });
    expect(await warning.count()).toBe(0);
    const envName = form.getByLabel("Headers 2 value: environment variable");
    await envName.fill("1-GW-KEY");
    await form.getByText("An environment variable name has letters, digits and _").waitFor();
    expect(await envName.getAttribute("aria-invalid")).toBe("true");
    // Refused by the browser: no request leaves.
    let wrote = false;
    const watch = (r: Request) => void (r.method() === "POST" && r.url().includes("/destinations") && (wrote = true));
    page.on("request", watch);
    await form.getByRole("button", { name: "Save" }).click();
    await Bun.sleep(300);
    page.off("request", watch);
    expect(wrote).toBe(false);
    expect(await envName.evaluate((input) => (input as HTMLInputElement).validity.customError)).toBe(true);
    await envName.fill("GW_KEY");

    await form.getByRole("button", { name: "Add headers" }).click();
    await form.getByLabel("Headers 3 name").fill("X-Tenant");
    await form.getByLabel("Headers 3 value kind").selectOption({ label: "Plain text" });
    await form.getByLabel("Headers 3 value", { exact: true }).fill("t1");
    expect(await warning.count()).toBe(0);
    await browser.screenshot("secrets-new-1280");
    await page.emulateMedia({ colorScheme: "dark" });
    await browser.screenshot("secrets-new-dark-1280");
    await page.emulateMedia({ colorScheme: "light" });
    await phone(browser, "secrets-new-390");

    const sent = nextWrite("/destinations");
    await form.getByRole("button", { name: "Save" }).click();
    expect(((await sent).postDataJSON() as Destination).config.headers).toEqual({
      "X-Auth-Token": "abc-123",
      "x-api-key": { env: "GW_KEY" },
      "X-Tenant": { value: "t1", secret: false },
    });
    await page.getByText('Created destination "gateway".', { exact: false }).waitFor();
    const settings = await row("gateway").locator("td").nth(1).textContent();
    expect(settings).toContain("headers.X-Auth-Token=(secret)");
    expect(settings).toContain("headers.x-api-key=(host env GW_KEY)");
    expect(settings).toContain("headers.X-Tenant=t1");
    expect(await page.content()).not.toContain("abc-123");
  },
  SLOW,
);

test(
  "a collector's header overrides: set as a secret on activation, kept by an edit of other overrides",
  async () => {
    const { page } = browser;
    await page.goto(`${server.base}/ui/collectors/${collectorId}`);
    const region = page.getByRole("region", { name: "Destinations" });
    const activate = region.getByRole("form", { name: "Activate a destination" });
    await activate.getByLabel("Destination", { exact: true }).selectOption({ label: "vendor (otlphttp)" });
    await activate.getByRole("button", { name: "Add headers" }).click();
    await activate.getByLabel("Headers 1 name").fill("Authorization");
    await activate.getByLabel("Headers 1 value", { exact: true }).fill(EDGE_ONLY);
    let sent = nextWrite(`/collectors/${collectorId}/destinations`);
    await activate.getByRole("button", { name: "Activate destination" }).click();
    expect(((await sent).postDataJSON() as { configOverrides: unknown }).configOverrides).toEqual({ headers: { Authorization: EDGE_ONLY } });
    const item = region.getByRole("listitem").filter({ hasText: "vendor" });
    await item.getByText("headers.Authorization=(secret)").waitFor();
    const read = async () =>
      (
        await server.call<{ items: { destinationId: string; configOverrides: { endpoint?: string; headers?: Record<string, Summary> } }[] }>(
          `/collectors/${collectorId}/destinations`,
        )
      ).items[0]!.configOverrides;
    const stored = (await read()).headers!.Authorization!;
    expect(stored).toEqual({ secret: true, set: true, updatedAt: expect.any(String) });
    await expectNoPlaintext();

    // A sensitive field typed into the JSON box is sent back to the fields.
    await item.getByRole("button", { name: "Edit overrides of vendor" }).click();
    const edit = item.getByRole("form", { name: "Overrides of vendor" });
    expect((await edit.locator("#destination-edit-secrets-configOverrides-headers-0-value").textContent())!).toMatch(SET_TEXT);
    const json = edit.getByLabel("Config overrides (JSON, optional)");
    await json.fill('{"headers": {"X-Other": "x"}}');
    await edit.getByRole("button", { name: "Save overrides" }).click();
    await edit.getByText("Set headers in the fields below, not in JSON").waitFor();
    await json.fill('{"endpoint": "https://edge-1.vendor.example"}');
    await browser.screenshot("secrets-overrides-1280");
    await phone(browser, "secrets-overrides-390");
    sent = nextWrite(`/collectors/${collectorId}/destinations`);
    await edit.getByRole("button", { name: "Save overrides" }).click();
    expect(((await sent).postDataJSON() as { configOverrides: unknown }).configOverrides).toEqual({
      endpoint: "https://edge-1.vendor.example",
      headers: { Authorization: stored },
    });
    await item.getByText("endpoint=https://edge-1.vendor.example").waitFor();
    expect(await read()).toEqual({ endpoint: "https://edge-1.vendor.example", headers: { Authorization: stored } });
    await expectNoPlaintext();
  },
  SLOW,
);

test(
  "a viewer sees which values are secret and none of them",
  async () => {
    const { page } = browser;
    await browser.context.clearCookies();
    const session = await browser.context.request.post(`${server.base}/api/v1/session`, { data: VIEWER });
    expect(session.status()).toBe(200);
    await page.goto(`${server.base}/ui/destinations`);
    expect(await row("gateway").locator("td").nth(1).textContent()).toContain("headers.X-Auth-Token=(secret)");
    expect(await page.getByRole("button", { name: /^Edit/ }).count()).toBe(0);
    await expectNoPlaintext();
    await page.goto(`${server.base}/ui/collectors/${collectorId}`);
    await page.getByRole("region", { name: "Destinations" }).getByText("headers.Authorization=(secret)").waitFor();
    expect(await page.getByRole("button", { name: /^Edit overrides/ }).count()).toBe(0);
    await expectNoPlaintext();
    browser.assertClean();
  },
  SLOW,
);
