/**
 * The dashboard in Debian's chromium against the real server (issue 24 part
 * 4): signing in lands on it; an empty fleet says what to do next; OpAMP test
 * clients that apply, fail, only report and say goodbye, collectors never
 * connected (one Alloy) and own-metrics pushes show up live, without a
 * reload; each number opens the list it counts. The System page reads as
 * labelled rows, no JSON. Screenshots at 1440×900 and 390×844, no console errors.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { AgentCapabilities, RemoteConfigStatuses } from "../../server/gen/opamp/v1/opamp_pb.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { applied, description, RawAgent, until } from "../opamp/helpers.ts";
import { openBrowser, type BrowserSession } from "./browser.ts";
import { pushLogFlow } from "../telemetry/points.ts";
import { matchedPipeline } from "../deployment.ts";

let server: TestServer;
let browser: BrowserSession;
const agents: RawAgent[] = [];
const ids: Record<string, string> = {};
const SLOW = 30_000;

const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);

beforeAll(async () => {
  server = await startTestServer({ SVC_EXTERNALURL: "https://svc.example.com" });
  browser = await openBrowser({ width: 1440, height: 900 });
}, SLOW);

afterAll(async () => {
  for (const agent of agents) agent.close();
  await browser?.close();
  await server?.stop();
});

const push = (collectorId: string, seconds: number, accepted: number, failed: number) => pushLogFlow(server, collectorId, seconds, accepted, failed);

const region = (name: string) => browser.page.getByRole("region", { name, exact: true });
const noOverflow = () => browser.page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

test(
  "signing in lands on the dashboard; an empty fleet says what to do next",
  async () => {
    const { page } = browser;
    const admin = await server.uiAdmin();
    await page.goto(`${server.base}/ui/login`);
    await page.getByLabel("Username").fill(admin.username);
    await page.getByLabel("Password").fill(admin.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL(/\/ui\/dashboard$/);
    await page.getByRole("heading", { level: 1, name: "Dashboard" }).waitFor();
    expect(await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Dashboard" }).getAttribute("aria-current")).toBe("page");
    expect(await page.title()).toBe("Dashboard · svc");
    await page.getByRole("heading", { name: "No collectors yet" }).waitFor();
    await page.getByRole("link", { name: "Onboarding" }).last().click();
    await page.waitForURL(/\/ui\/onboarding$/);
    await page.goBack();
    await page.getByRole("heading", { name: "No collectors yet" }).waitFor();
    await browser.screenshot("dashboard-empty-1440");
  },
  SLOW,
);

test("the fleet's collectors, the rollout and its failure, reporting only and rates show up live", async () => {
  const { page } = browser;
  const source = await call<{ id: string }>("/sources", "POST", { name: "app", type: "filelog", config: { include: ["/var/log/app/*.log"] } });
  const destination = await call<{ id: string }>("/destinations", "POST", {
    name: "gateway",
    type: "otlphttp",
    config: { endpoint: "https://otlp.example.com" },
  });
  await matchedPipeline(call, "fleet", source.id, destination.id, ["fleet=yes"]);
  await call("/commit", "POST", { message: "fleet" });
  for (const name of ["edge-1", "edge-2", "standalone", "gone", "waiting"]) {
    ids[name] = (await call<{ id: string }>("/collectors", "POST", { name, tags: ["edge-1", "edge-2"].includes(name) ? { fleet: "yes" } : {} })).id;
  }
  ids["alloy-1"] = (await call<{ id: string }>("/collectors", "POST", { name: "alloy-1", managementMode: "rcfg-remotecfg" })).id;

  // The page is open on the empty state: the collector events turn it into the fleet view.
  await region("Collectors").waitFor();
  const connect = async (name: string, capabilities?: bigint) => {
    const { token } = await server.app.collectorTokens.mint({ actor: "test", remoteAddr: null }, ids[name]!);
    const agent = await RawAgent.connect(`${server.base.replace(/^http/, "ws")}/v1/opamp`, token);
    agents.push(agent);
    await agent.call({ agentDescription: description({ "service.name": name }), ...(capabilities === undefined ? {} : { capabilities }) });
    return agent;
  };
  const edge1 = await connect("edge-1");
  const edge2 = await connect("edge-2");
  await connect("standalone", BigInt(AgentCapabilities.AgentCapabilities_ReportsStatus) | BigInt(AgentCapabilities.AgentCapabilities_ReportsHealth));
  const gone = await connect("gone");
  gone.send({ agentDisconnect: {} });
  await until(async () => (await server.app.collectors.get(ids.gone!)).status === "offline");

  const offers = [edge1, edge2].map((agent) => agent.next((m) => m.remoteConfig !== undefined, 10_000));
  await call("/publish", "POST");
  const [to1, to2] = (await Promise.all(offers)).map((m) => m.remoteConfig!);
  await edge1.call({ remoteConfigStatus: applied(to1!.configHash) });
  await edge2.call({ remoteConfigStatus: applied(to2!.configHash, RemoteConfigStatuses.RemoteConfigStatuses_FAILED, "receiver filelog: permission denied") });
  for (const [name, perSecond, errors] of [
    ["edge-1", 120, 0],
    ["edge-2", 30, 2],
    ["alloy-1", 60, 0],
  ] as const) {
    await push(ids[name]!, 1000, 0, 0);
    await push(ids[name]!, 1600, perSecond * 600, errors * 600);
  }

  // No reload: events (and the slow poll for rates) bring every number in.
  const fleet = region("Collectors");
  await fleet.getByRole("link", { name: "6 total" }).waitFor();
  for (const label of ["2 online", "1 degraded", "1 offline", "2 pending", "5 OpenTelemetry Collector (OpAMP)", "1 Alloy (remote config)"]) {
    await fleet.getByRole("link", { name: label }).waitFor();
  }
  const rollout = region("Latest rollout");
  await rollout.getByText("completed with failures").waitFor();
  await rollout.getByRole("link", { name: "1 failed" }).waitFor();
  await rollout.getByRole("link", { name: "1 current" }).waitFor();
  expect(await rollout.getByRole("listitem").filter({ hasText: "edge-2" }).textContent()).toContain("receiver filelog: permission denied");
  const attention = region("Needs attention");
  await attention.getByRole("link", { name: "1 reporting only" }).waitFor();
  await attention.getByRole("link", { name: "0 drifted" }).waitFor();
  await attention.getByRole("link", { name: "standalone" }).waitFor();

  const top = region("Top collectors by records/s");
  await top.getByRole("link", { name: "edge-1" }).waitFor({ timeout: 20_000 });
  expect((await top.getByRole("listitem").allTextContents()).map((t) => t.replace(/\s+/g, " "))).toEqual(["edge-1120/s", "alloy-160.0/s", "edge-230.0/s"]);
  expect(await region("Top collectors by errors/s").getByRole("listitem").allTextContents()).toEqual(["edge-22.00/s"]);
  const rate = region("Fleet records/s");
  expect(await rate.textContent()).toContain("210/s");
  expect(await rate.textContent()).toContain("from 3 collectors; 3 reporting now");
  await browser.screenshot("dashboard-1440");
  await page.emulateMedia({ colorScheme: "dark" });
  await browser.screenshot("dashboard-dark-1440");
  await page.emulateMedia({ colorScheme: "light" });
  await page.setViewportSize({ width: 390, height: 844 });
  expect(await noOverflow()).toBe(0);
  await browser.screenshot("dashboard-390");
  await page.setViewportSize({ width: 1440, height: 900 });
}, 60_000);

test(
  "each number opens the list it counts",
  async () => {
    const { page } = browser;
    const back = async () => {
      await page.goBack();
      await region("Collectors").waitFor();
    };
    await region("Collectors").getByRole("link", { name: "1 offline" }).click();
    await page.waitForURL((url) => url.pathname === "/ui/collectors" && url.searchParams.get("status") === "offline");
    await page.getByRole("link", { name: "gone" }).waitFor();
    expect(await page.getByRole("link", { name: "edge-1" }).count()).toBe(0);
    await back();

    await region("Collectors").getByRole("link", { name: "1 Alloy (remote config)" }).click();
    await page.waitForURL((url) => url.searchParams.get("match") === 'collector.mode="rcfg-remotecfg"');
    await page.getByRole("link", { name: "alloy-1" }).waitFor();
    expect(await page.getByRole("link", { name: "edge-1" }).count()).toBe(0);
    await back();

    await region("Latest rollout").getByRole("link", { name: "1 failed" }).click();
    await page.waitForURL(/\/ui\/changes$/);
    await back();

    await region("Latest rollout").getByRole("link", { name: "edge-2" }).click();
    await page.waitForURL((url) => url.pathname === `/ui/collectors/${ids["edge-2"]}`);
    await back();

    await region("Top collectors by records/s").getByRole("link", { name: "alloy-1" }).click();
    await page.waitForURL((url) => url.pathname === `/ui/collectors/${ids["alloy-1"]}`);
    await back();

    // A "Needs attention" count opens the collector list filtered to what it counts.
    await region("Needs attention").getByRole("link", { name: "1 reporting only" }).click();
    await page.waitForURL((url) => url.pathname === "/ui/collectors" && url.searchParams.get("attention") === "reportingOnly");
    await page.getByRole("link", { name: "standalone" }).waitFor();
    expect(await page.getByRole("link", { name: "edge-1" }).count()).toBe(0);
  },
  SLOW,
);

test(
  "the System page reads as labelled rows, not JSON",
  async () => {
    const { page } = browser;
    await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "System" }).click();
    await page.getByRole("heading", { level: 1, name: "System" }).waitFor();
    const control = page.getByRole("table", { name: "Control plane" });
    await control.waitFor();
    expect(await control.getByRole("row", { name: /^Status/ }).textContent()).toContain("ok");
    for (const name of ["Storage", "Onboarding", "Collectors", "Channels"]) await page.getByRole("table", { name }).waitFor();
    expect(
      await page
        .getByRole("table", { name: "Onboarding" })
        .getByRole("row", { name: /URL given to collectors/ })
        .textContent(),
    ).toContain("https://svc.example.com");
    await page.getByRole("table", { name: "Collectors" }).getByRole("link", { name: "1 offline" }).waitFor();
    expect(await page.getByRole("table", { name: "Channels" }).getByRole("row", { name: /OpAMP/ }).textContent()).toMatch(
      /^OpenTelemetry Collector \(OpAMP\).*up/,
    );
    expect(await page.locator("main pre").count()).toBe(0);
    expect(await page.locator("main").textContent()).not.toMatch(/[{}]/);
    await browser.screenshot("system-1440");
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await noOverflow()).toBe(0);
    await browser.screenshot("system-390");
    await page.setViewportSize({ width: 1440, height: 900 });
  },
  SLOW,
);

test("no console or page errors during the run", () => {
  browser.assertClean();
});
