/**
 * "Publish to one collector" by what a person types (issue 34 item 3), in
 * Debian's chromium against a real test server: the field suggests the
 * collectors matching the text, a typed unique name publishes to that
 * collector, and a name two collectors share is refused with both offered as
 * choices; picking one publishes to it and to no other.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../harness.ts";
import { openBrowser, signIn, type BrowserSession } from "./browser.ts";

let server: TestServer;
let browser: BrowserSession;
const SLOW = 30_000;
let solo: string;
let twins: string[];

beforeAll(async () => {
  server = await startTestServer();
  browser = await openBrowser({ width: 1280, height: 800 });
  const created = async (name: string) => (await server.call<{ id: string }>("/collectors", "POST", { name })).id;
  solo = await created("solo-edge");
  twins = [await created("twin"), await created("twin")].sort();
  // A head commit to publish: one record is enough; collectors without routes render a config of their own.
  await server.call("/destinations", "POST", { name: "gateway", type: "debug", config: {} });
  await server.call("/commit", "POST", { message: "first" });
  await signIn(browser.page, server.base, await server.uiAdmin(), "/ui/changes");
}, SLOW);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

/** Clicks "Publish to collector" and answers the status of the publish call it makes, which must send `sent` as it was typed. */
async function publishAs(sent: string): Promise<number> {
  const { page } = browser;
  const answer = page.waitForResponse(
    (r) =>
      r.request().method() === "POST" &&
      r.url().endsWith("/api/v1/publish") &&
      JSON.stringify(r.request().postDataJSON()) === JSON.stringify({ collectorIds: [sent] }),
    { timeout: 20_000 },
  );
  await page.getByRole("form", { name: "Publish to one collector" }).getByRole("button", { name: "Publish to collector" }).click();
  return (await answer).status();
}

const target = async (id: string) => (await server.app.delivery.target(id))?.target.targetCommit ?? null;

test(
  "a typed name is suggested and publishes to that collector",
  async () => {
    const { page } = browser;
    const form = page.getByRole("form", { name: "Publish to one collector" });
    const field = form.getByLabel("Collector", { exact: true });
    await field.fill("solo");
    // The suggestion offers the name itself, the id beside it.
    await page.locator(`#publish-collector-options option[value="solo-edge"]`).waitFor({ state: "attached" });
    expect(await page.locator("#publish-collector-options option").first().textContent()).toBe(solo);
    await field.fill("solo-edge");
    expect(await publishAs("solo-edge")).toBe(202);
    await page
      .getByRole("status")
      .getByText(/^Publishing commit \w+ to 1 collector/)
      .waitFor();
    expect(await target(solo)).not.toBeNull();
    expect(await target(twins[0]!)).toBeNull();
  },
  SLOW,
);

test(
  "a shared name is refused with both collectors as choices; the one picked is published",
  async () => {
    const { page } = browser;
    const form = page.getByRole("form", { name: "Publish to one collector" });
    await form.getByLabel("Collector", { exact: true }).fill("twin");
    expect(await publishAs("twin")).toBe(409);
    await page
      .getByRole("alert")
      .getByText(/HTTP 409 · ambiguous_name/)
      .waitFor();
    expect(await page.getByRole("alert").locator("li").allTextContents()).toEqual(twins.map((id) => `collectorIds[0]: collector "twin" (id ${id})`));
    const choices = form.getByRole("group", { name: "Collectors with this name" }).getByRole("button");
    expect(await choices.allTextContents()).toEqual(twins.map((id) => `twin ${id}`));
    await browser.screenshot("publish-one-ambiguous");
    await choices.filter({ hasText: twins[1]! }).click();
    expect(await form.getByLabel("Collector", { exact: true }).inputValue()).toBe(twins[1]!);
    expect(await publishAs(twins[1]!)).toBe(202);
    // The refusal and its choices are gone once the publish is answered.
    await form.getByRole("group", { name: "Collectors with this name" }).waitFor({ state: "detached" });
    expect(await page.getByText(/ambiguous_name/).count()).toBe(0);
    expect(await target(twins[1]!)).not.toBeNull();
    expect(await target(twins[0]!)).toBeNull();
    browser.assertClean();
  },
  SLOW,
);
