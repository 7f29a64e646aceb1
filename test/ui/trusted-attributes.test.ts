/**
 * The System page's trusted reported attributes in Debian's chromium against
 * the real server: an admin lists keys and saves them (the API and the audit
 * log then say so), a key svc sets itself is refused with the API's reason,
 * un-trusting a key a pipeline reads shows the 409 naming the pipeline, and a
 * collector's page marks each reported attribute trusted or not. No console
 * errors.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../harness.ts";
import { description, RawAgent, until } from "../opamp/helpers.ts";
import { openBrowser, signIn, type BrowserSession } from "./browser.ts";

let server: TestServer;
let browser: BrowserSession;
let agent: RawAgent;
let collectorId: string;
const SLOW = 30_000;

const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);

beforeAll(async () => {
  server = await startTestServer();
  browser = await openBrowser({ width: 1280, height: 800 });
  collectorId = (await call<{ id: string }>("/collectors", "POST", { name: "web-7" })).id;
  const { token } = await call<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp", collectorId });
  agent = await RawAgent.connect(`${server.base.replace(/^http/, "ws")}/v1/opamp`, token);
  await agent.call({ agentDescription: description({ "host.name": "web-7" }, { "os.type": "linux", datacenter: "fra1" }) });
  await until(async () => (await call<{ reported?: Record<string, string> }>(`/collectors/${collectorId}`)).reported?.["os.type"] === "linux");
  browser.page.setDefaultTimeout(10_000);
  await signIn(browser.page, server.base, await server.uiAdmin(), "/ui/system");
}, 60_000);

afterAll(async () => {
  agent?.close();
  await browser?.close();
  await server?.stop();
});

test(
  "an admin trusts keys on the System page; svc's own keys and a key a pipeline reads are refused with the reason",
  async () => {
    const { page } = browser;
    const section = page.getByRole("region", { name: "Trusted reported attributes" });
    const input = section.getByRole("textbox", { name: /Trusted here/ });
    await input.fill("host.name, os.type");
    await section.getByRole("button", { name: "Save" }).click();
    await until(async () => ((await call<{ listed: string[] }>("/system/trusted-attributes")).listed.length === 2 ? true : null));
    expect(await call("/system/trusted-attributes")).toEqual({ configured: [], listed: ["host.name", "os.type"], trusted: ["host.name", "os.type"] });
    expect((await call<{ items: { actor: string; details: unknown }[] }>("/audit?action=attributes.trust")).items).toEqual([
      expect.objectContaining({ actor: "user:admin", details: { added: ["host.name", "os.type"], removed: [], keys: ["host.name", "os.type"] } }),
    ]);

    await input.fill("host.name, environment");
    await section.getByRole("button", { name: "Save" }).click();
    await section
      .getByRole("alert")
      .getByText(/svc's own attribute/)
      .first()
      .waitFor();

    await call("/pipelines", "POST", { name: "linux hosts", signal: "logs", matchers: ["os.type=linux"] });
    await input.fill("host.name");
    await section.getByRole("button", { name: "Save" }).click();
    await section
      .getByRole("alert")
      .getByText(/pipeline "linux hosts" matches on "os.type"/)
      .first()
      .waitFor();
    expect((await call<{ trusted: string[] }>("/system/trusted-attributes")).trusted).toEqual(["host.name", "os.type"]);
    await browser.screenshot("system-trusted-attributes-1280");
  },
  SLOW,
);

test(
  "the collector's page marks each reported attribute trusted or only reported",
  async () => {
    const { page } = browser;
    await call("/system/trusted-attributes", "PUT", { keys: ["host.name", "os.type"] });
    await page.goto(`${server.base}/ui/collectors/${collectorId}`);
    const reported = page.getByRole("table", { name: "Collector facts" }).getByRole("row", { name: "Reported attributes" });
    await reported.getByText("(trusted)").first().waitFor();
    expect(await reported.getByRole("listitem").allTextContents()).toEqual([
      "datacenter=fra1 (reported)",
      "host.name=web-7 (trusted)",
      "os.type=linux (trusted)",
    ]);
  },
  SLOW,
);

test("no console or page errors", () => {
  browser.assertClean();
});
