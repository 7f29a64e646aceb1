/**
 * The Webhooks page in Debian's chromium against the real server: an admin
 * adds a hook pointing at a receiver on loopback (events ticked, the secret
 * generated and shown once), an enrollment token about to expire causes a
 * `token.expiring` event (found by Enrollment.expiring on a clock moved on), the receiver's first answer is a 500 and its second
 * a 200, and the delivery log shows the failed attempt with its next retry
 * and error, then the delivered one. The receiver verifies every signature
 * with the secret the page showed. The hook is deleted; both are audited
 * under the admin's name. Screenshots at 1280 and 390 px; no console errors.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { announceExpiring } from "../../server/webhooks/sweep.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { freePort } from "../process/spawn.ts";
import { verifySignature as verify, webhookReceiver } from "../webhooks/receiver.ts";
import { openBrowser, phone, signIn, type BrowserSession } from "./browser.ts";

let server: TestServer;
let admin: BrowserSession;
let receiver: ReturnType<typeof webhookReceiver>;
const SLOW = 40_000;
/** Answers in turn: a 500, then 200s. */
const statuses = [500];

beforeAll(async () => {
  receiver = webhookReceiver(() => statuses.shift() ?? 200);
  const port = freePort();
  // The receiver is on loopback.
  server = await startTestServer({ SVC_LISTEN: `127.0.0.1:${port}`, SVC_EXTERNALURL: `http://127.0.0.1:${port}`, SVC_WEBHOOKS_ALLOWPRIVATETARGETS: "true" });
  admin = await openBrowser({ width: 1280, height: 800 });
  const { username, password } = await server.uiAdmin();
  await signIn(admin.page, server.base, { username, password }, "/ui/webhooks");
}, SLOW);

afterAll(async () => {
  await admin?.close();
  await server?.stop();
  receiver?.stop();
}, SLOW);

const hookUrl = () => receiver.url;

test("an admin adds a hook, an event is delivered after a retry, and the log shows both attempts", async () => {
  const { page } = admin;
  await page.getByRole("heading", { name: "Webhooks", level: 1 }).waitFor();
  await page.getByText("0 webhooks.").waitFor();
  expect(await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Webhooks" }).getAttribute("aria-current")).toBe("page");

  // Nothing ticked: said beside the events, nothing sent.
  await page.getByLabel("URL").fill(hookUrl());
  await page.getByRole("button", { name: "Generate" }).click();
  await page.getByRole("button", { name: "Add webhook" }).click();
  await page.locator("#webhook-events-error").getByText("tick at least one event").waitFor();
  // A plain-http URL to another host is the API's 400, beside the URL.
  await page.getByLabel("URL").fill("http://example.com/hook");
  await page.getByRole("checkbox", { name: /token\.expiring/ }).check();
  await page.getByRole("checkbox", { name: /collector\.stalled/ }).check();
  await page.getByRole("button", { name: "Add webhook" }).click();
  await page.locator("#webhook-url-error").waitFor();
  expect(await page.getByLabel("URL").getAttribute("aria-invalid")).toBe("true");

  await page.getByLabel("URL").fill(hookUrl());
  const generated = await page.getByLabel("Signing secret", { exact: true }).inputValue();
  expect(generated.length).toBeGreaterThanOrEqual(40);
  await page.getByRole("button", { name: "Add webhook" }).click();
  const shown = page.getByLabel(`Signing secret for ${hookUrl()}`);
  await shown.waitFor();
  const secret = await shown.inputValue();
  expect(secret).toBe(generated);
  const row = page.getByRole("region", { name: "Webhooks" }).locator("tbody tr").filter({ hasText: hookUrl() });
  expect(await row.locator("td").nth(0).textContent()).toBe("collector.stalledtoken.expiring");
  const listed = await server.call<{ items: { id: string; url: string; events: string[] }[] }>("/webhooks");
  expect(listed.items).toEqual([expect.objectContaining({ url: hookUrl(), events: ["collector.stalled", "token.expiring"] })]);
  expect(JSON.stringify(listed)).not.toContain(secret);
  await admin.screenshot("webhooks-1280");

  // The event: an agent token made to live an hour is due when a quarter of that is left; the sweep's check, run as it would
  // 50 minutes on, queues it, and the server's sender delivers it.
  const token = await server.call<{ id: string }>("/enrollment-tokens", "POST", { kind: "agent", expiresIn: 3600, maxUses: null });
  expect(await server.app.enrollment.expiring(new Date(Date.now() + 50 * 60_000), 24 * 3_600_000, announceExpiring(server.app.webhooks))).toBe(1);
  await row.getByRole("button", { name: `Delivery log of ${hookUrl()}` }).click();
  expect(await row.getByRole("button", { name: `Delivery log of ${hookUrl()}` }).getAttribute("aria-pressed")).toBe("true");
  const log = page.getByRole("region", { name: "Delivery log" });
  // The receiver's 500: failed, with a next retry and the error; the retry (10 s backoff, halved at most) is delivered.
  const failed = log.locator("tbody tr").filter({ hasText: "failed" });
  await failed.waitFor({ timeout: 30_000 });
  expect(await failed.locator("td").nth(3).textContent()).toBe("500");
  expect(await failed.locator("td").nth(4).locator("time").count()).toBe(1);
  expect(await failed.locator("td").nth(5).textContent()).toBe("HTTP 500");
  const delivered = log.locator("tbody tr").filter({ hasText: "delivered" });
  await delivered.waitFor({ timeout: 30_000 });
  // The whole log goes with the attempt number, so a retry that failed too shows its error in the diff.
  const attempts = { delivered: await delivered.locator("td").nth(1).textContent(), log: await log.locator("tbody tr").allInnerTexts() };
  expect(attempts).toMatchObject({ delivered: "2" });
  expect(await log.getByRole("columnheader").allTextContents()).toEqual(["Time", "Event", "Attempt", "Status", "HTTP", "Next retry", "Last error"]);
  await admin.screenshot("webhooks-log-1280");
  await phone(admin, "webhooks-log-390");

  expect(receiver.got).toHaveLength(2);
  for (const delivery of receiver.got) expect(verify(secret, delivery.signature, delivery.body)).toBe(true);
  expect(JSON.parse(receiver.got[1]!.body)).toMatchObject({ event: "token.expiring", data: { tokenId: token.id, kind: "agent" } });
}, 90_000);

test("the admin deletes the hook; create and delete are audited under their name", async () => {
  const { page } = admin;
  page.once("dialog", (dialog) => void dialog.accept());
  await page.getByRole("button", { name: `Delete webhook ${hookUrl()}` }).click();
  await page.getByText(`The webhook to ${hookUrl()} was deleted.`).waitFor();
  expect(await page.getByRole("region", { name: "Delivery log" }).count()).toBe(0);
  expect((await server.call<{ items: unknown[] }>("/webhooks")).items).toEqual([]);
  const audit = await server.call<{ items: { action: string; actor: string }[] }>("/audit?action=webhook.create");
  const deleted = await server.call<{ items: { action: string; actor: string }[] }>("/audit?action=webhook.delete");
  expect([...audit.items, ...deleted.items].map((e) => [e.action, e.actor])).toEqual([
    ["webhook.create", "user:admin"],
    ["webhook.delete", "user:admin"],
  ]);
});

test("no console or page errors", () => {
  admin.assertClean();
});
