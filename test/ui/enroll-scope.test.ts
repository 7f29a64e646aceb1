/**
 * Issue 33 item 2 in the UI: minting a collector's credential needs
 * collectors:enroll, which editors lack, so an editor is offered no button
 * the API would answer 403. In Debian's chromium against the real server, an
 * editor: on Onboarding, no collector install command (a note says who makes
 * it) and bootstrap files only from a token held; on a collector's page no
 * token rotation; Add collector makes the record only, and says so. No call
 * the pages make is refused, and nothing was minted.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { SYSTEM_ACTOR } from "../../server/audit/audit.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { freePort } from "../process/spawn.ts";
import { openBrowser, type BrowserSession, signIn } from "./browser.ts";

let server: TestServer;
let browser: BrowserSession;
let collectorId: string;
const SLOW = 30_000;
const PASSWORD = "eda-chose-this-password";

beforeAll(async () => {
  const port = freePort();
  server = await startTestServer({ SVC_LISTEN: `127.0.0.1:${port}`, SVC_EXTERNALURL: `http://127.0.0.1:${port}` });
  await server.app.users.create(SYSTEM_ACTOR, { username: "eda", email: "", role: "editor" }, PASSWORD);
  collectorId = (await server.call<{ id: string }>("/collectors", "POST", { name: "alloy-1", managementMode: "rcfg-remotecfg" })).id;
  browser = await openBrowser({ width: 1280, height: 800 });
  await signIn(browser.page, server.base, { username: "eda", password: PASSWORD }, "/ui/onboarding");
}, SLOW);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

test(
  "Onboarding: no collector install command for an editor, and bootstrap files only from a token held",
  async () => {
    const { page } = browser;
    const enroll = page.getByRole("region", { name: "Enroll a collector" });
    await enroll
      .getByRole("note")
      .getByText(/needs the collectors:enroll scope/)
      .waitFor();
    expect(await page.getByRole("button", { name: "Create collector command" }).count()).toBe(0);
    // The agent command is the agents:write holder's, which editors are.
    await page.getByRole("button", { name: "Create agent command" }).waitFor();
    const files = page.getByRole("form", { name: "Bootstrap files" });
    expect(await files.getByRole("radio", { name: /Mint a single-use enrollment token/ }).isDisabled()).toBe(true);
    expect(await files.getByRole("radio", { name: "Use a token I have" }).isChecked()).toBe(true);
    await files.getByRole("textbox", { name: "Enrollment token" }).waitFor();
  },
  SLOW,
);

test(
  "a collector's page offers an editor no token rotation",
  async () => {
    const { page } = browser;
    await page.goto(`${server.base}/ui/collectors/${collectorId}`);
    await page.getByRole("heading", { level: 1, name: "alloy-1" }).waitFor();
    await page.getByRole("heading", { name: "Settings" }).waitFor();
    expect(await page.getByRole("heading", { name: "Collector token" }).count()).toBe(0);
  },
  SLOW,
);

test(
  "Add collector makes the record only, and says an admin makes its install command",
  async () => {
    const { page } = browser;
    await page.goto(`${server.base}/ui/collectors`);
    await page.getByRole("button", { name: "Add collector" }).click();
    const form = page.getByRole("form", { name: "Add a collector" });
    await form
      .getByRole("note")
      .getByText(/an admin makes them \(collectors:enroll\)/)
      .waitFor();
    expect(await form.getByRole("radio", { name: /bootstrap files/ }).count()).toBe(0);
    await form.getByLabel("Name").fill("web-2");
    await form.getByRole("button", { name: "Add collector" }).click();
    await page.getByRole("status").getByText("An admin makes its install command (collectors:enroll).").waitFor();
    const added = (await server.call<{ items: { name: string }[] }>("/collectors")).items.map((c) => c.name);
    expect(added).toContain("web-2");
    // Nothing the pages asked for was refused, and no credential was minted.
    expect(browser.httpErrors).toEqual([]);
    browser.assertClean();
    expect((await server.call<{ items: unknown[] }>("/enrollment-tokens")).items).toEqual([]);
    expect((await server.call<{ items: { action: string }[] }>("/audit?action=auth.denied")).items).toEqual([]);
  },
  SLOW,
);
