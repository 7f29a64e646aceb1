/**
 * The dashboard and Changes tell the truth (issue 34 part 1), in Debian's
 * chromium against the real server with real OpAMP WebSocket agents and own
 * metrics pushed over OTLP/HTTP: after a fleet publish with one collector
 * failed and one offline, "Needs attention" names both (never "all is well"),
 * the failed fleet rollout stays the latest on the dashboard and on Changes
 * after a later one-collector publish, the Rollouts page lists both with
 * outcome, counts and who; and the fleet's records/s drops when a collector
 * goes offline, the number and the chart's last point alike. No console errors.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { RemoteConfigStatuses } from "../../server/gen/opamp/v1/opamp_pb.ts";
import type { Dashboard } from "../../shared/dashboard.ts";
import type { Rollout } from "../../shared/rollouts.ts";
import { matchedPipeline } from "../deployment.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { applied, description, RawAgent, until } from "../opamp/helpers.ts";
import { pushMetrics } from "../telemetry/points.ts";
import { openBrowser, signIn, type BrowserSession } from "./browser.ts";

let server: TestServer;
let browser: BrowserSession;
const agents: RawAgent[] = [];
const ids: Record<string, string> = {};
const tokens: Record<string, string> = {};
const SLOW = 60_000;
/** Records/s each collector's receiver takes in. */
const RATES: Record<string, number> = { good: 10, failing: 20, away: 50 };

const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);
const region = (name: string) => browser.page.getByRole("region", { name, exact: true });

/** The collector's accepted-records counter after `seconds` at its rate, its point at 1000 + seconds (ms precision). */
async function pushOwnMetrics(name: string, seconds: number) {
  const nanos = BigInt(Math.round((1000 + seconds) * 1000)) * 1_000_000n;
  const res = await pushMetrics(server.base, tokens[name]!, [
    {
      name: "otelcol_receiver_accepted_log_records",
      sum: {
        aggregationTemporality: 2,
        isMonotonic: true,
        dataPoints: [
          {
            attributes: [{ key: "receiver", value: { stringValue: "filelog/app" } }],
            startTimeUnixNano: "1000000000",
            timeUnixNano: String(nanos),
            asDouble: RATES[name]! * seconds,
          },
        ],
      },
    },
  ]);
  expect(res.status).toBe(200);
}

beforeAll(async () => {
  server = await startTestServer();
  browser = await openBrowser({ width: 1440, height: 900 });
}, SLOW);

afterAll(async () => {
  for (const agent of agents) agent.close();
  await browser?.close();
  await server?.stop();
});

test("a fleet rollout with one collector failed and one offline: both need attention, it stays the latest rollout, Rollouts lists it, and fleet records/s drops", async () => {
  const { page } = browser;
  const source = await call<{ id: string }>("/sources", "POST", { name: "app", type: "filelog", config: { include: ["/var/log/app/*.log"] } });
  const destination = await call<{ id: string }>("/destinations", "POST", {
    name: "gateway",
    type: "otlphttp",
    config: { endpoint: "https://otlp.example.com" },
  });
  await matchedPipeline(call, "fleet", source.id, destination.id, ["fleet=yes"]);
  await call("/commit", "POST", { message: "fleet" });
  const agentOf: Record<string, RawAgent> = {};
  const since: Record<string, number> = {};
  for (const name of ["good", "failing", "away"]) {
    ids[name] = (await call<{ id: string }>("/collectors", "POST", { name, tags: { fleet: "yes" } })).id;
    // One collector token: OpAMP and its own metrics' OTLP/HTTP push.
    const { token } = await server.app.collectorTokens.mint({ actor: "test", remoteAddr: null }, ids[name]!);
    tokens[name] = token;
    const agent = await RawAgent.connect(`${server.base.replace(/^http/, "ws")}/v1/opamp`, token);
    agents.push(agent);
    await agent.call({ agentDescription: description({ "service.name": name }) });
    agentOf[name] = agent;
    // Ten minutes of its own metrics, ending as it arrives; later points follow the clock from there.
    await pushOwnMetrics(name, 0);
    await pushOwnMetrics(name, 600);
    since[name] = Date.now();
  }

  await signIn(page, server.base, await server.uiAdmin(), "/ui/dashboard");
  const rate = region("Fleet records/s");
  await rate.getByText("from 3 collectors; 3 reporting now").waitFor();
  expect(await rate.locator(".stat-value").textContent()).toBe("80.0/s");
  expect(await rate.getByRole("list", { name: "Fleet records per second: latest values" }).textContent()).toContain("80.0/s");

  // away goes offline; the publish reaches good, which applies, and failing, which fails.
  agentOf.away!.send({ agentDisconnect: {} });
  await until(async () => (await server.app.collectors.get(ids.away!)).status === "offline");
  const offers = [agentOf.good!, agentOf.failing!].map((agent) => agent.next((m) => m.remoteConfig !== undefined, 15_000));
  const fleet = await call<Rollout>("/publish", "POST");
  const [toGood, toFailing] = (await Promise.all(offers)).map((m) => m.remoteConfig!);
  await agentOf.good!.call({ remoteConfigStatus: applied(toGood!.configHash) });
  await agentOf.failing!.call({
    remoteConfigStatus: applied(toFailing!.configHash, RemoteConfigStatuses.RemoteConfigStatuses_FAILED, "receiver filelog: permission denied"),
  });
  await until(async () => (await call<Dashboard>("/dashboard")).rollout.state === "completed_with_errors");
  // A later publish to one collector is not the fleet's latest rollout.
  const single = await call<Rollout>(`/publish/${ids.good}`, "POST");
  expect(single.scope).toBe(ids.good!);

  // The page follows by itself (rollout and collector events).
  const attention = region("Needs attention");
  await attention.getByRole("link", { name: "1 failed" }).waitFor();
  await attention.getByRole("link", { name: "1 offline" }).waitFor();
  await attention.getByRole("link", { name: "failing" }).waitFor();
  await attention.getByRole("link", { name: "away" }).waitFor();
  expect(await attention.textContent()).toContain("receiver filelog: permission denied");
  expect(await attention.textContent()).not.toContain("Every collector is connected");
  const latest = region("Latest rollout");
  await latest.getByText("completed with failures").waitFor();
  await latest.getByRole("link", { name: "1 failed" }).waitFor();
  expect((await call<{ rolloutId: string }>("/publish/status?scope=fleet")).rolloutId).toBe(fleet.id);
  await browser.screenshot("dashboard-attention-1440");

  // Each count opens the collector list filtered to just those.
  await attention.getByRole("link", { name: "1 offline" }).click();
  await page.waitForURL((url) => url.pathname === "/ui/collectors" && url.searchParams.get("attention") === "offline");
  await page.getByRole("link", { name: "away" }).waitFor();
  expect(await page.getByRole("link", { name: "good", exact: true }).count()).toBe(0);
  await page.goBack();
  await region("Needs attention").getByRole("link", { name: "1 failed" }).click();
  await page.waitForURL((url) => url.pathname === "/ui/collectors" && url.searchParams.get("attention") === "failed");
  await page.getByRole("link", { name: "failing" }).waitFor();
  expect(await page.getByRole("link", { name: "away", exact: true }).count()).toBe(0);
  await page.goBack();

  // Fleet records/s: good and failing report on; away's rate leaves the number and the chart together.
  const dropped = await until(
    async () => {
      for (const name of ["good", "failing"]) await pushOwnMetrics(name, 600 + (Date.now() - since[name]!) / 1000);
      const d = await call<Dashboard>("/dashboard");
      return d.throughput.reporting === 2 && d.fleetRate.collectors === 2 && d;
    },
    SLOW,
    1000,
  );
  expect(dropped.fleetRate.history.at(-1)!.value).toBe(dropped.fleetRate.current!);
  expect(dropped.fleetRate.current).toBeCloseTo(30, 0);
  await page.reload();
  await rate.getByText("from 2 collectors; 2 reporting now").waitFor();
  const shown = await rate.locator(".stat-value").textContent();
  expect(shown).toMatch(/^(29|30)\.\d\/s$/);
  expect(await rate.getByRole("list", { name: "Fleet records per second: latest values" }).textContent()).toContain(shown!);

  // Changes: its progress is the fleet rollout's, not the later one-collector publish.
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Changes" }).click();
  await page.getByRole("region", { name: "Rollout progress" }).getByText("Completed with errors", { exact: true }).waitFor();

  // Rollouts lists both, newest first, with outcome, counts and who.
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Rollouts" }).click();
  await page.waitForURL(/\/ui\/rollouts$/);
  expect(await page.title()).toBe("Rollouts · svc");
  const rows = page.getByRole("table", { name: "Rollouts" }).getByRole("row");
  await rows.nth(2).waitFor();
  const fleetRow = (await rows.nth(2).textContent())!;
  expect(fleetRow).toContain("Publish");
  expect(fleetRow).toContain("fleet");
  expect(fleetRow).toContain("completed with failures");
  expect(fleetRow).toContain("1 current · 1 failed · 1 offline");
  expect(fleetRow).toContain(fleet.actor);
  const singleRow = (await rows.nth(1).textContent())!;
  expect(singleRow).toContain(ids.good!);
  await browser.screenshot("rollouts-1440");
  browser.assertClean();
}, 120_000);
