/**
 * A staged rollout driven from the Changes page in Debian's chromium against
 * the real server and 20 OpAMP WebSocket test clients (issue 23's browser
 * acceptance): the plan reads as two changes (prod and staging collectors
 * change differently) → confirming "Staged" in batches of 5 with a 10 %
 * threshold → the progress shows four batches, and two of the first batch's
 * clients refusing the new config pause it by itself, with the reason and
 * the failures named → Resume releases the next batches → Pause by the
 * button holds the last one back even after the third batch applied →
 * Resume → it finishes. Nothing past a released batch is sent anything.
 * Then a viewer sees the progress without the buttons, and a second staged
 * rollout is aborted with the failed collectors rolled back. Screenshots
 * along the way, no console errors.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { RemoteConfigStatuses, type ServerToAgent } from "../../server/gen/opamp/v1/opamp_pb.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { applied, description, RawAgent, until } from "../opamp/helpers.ts";
import { openBrowser, phone, type BrowserSession, signIn } from "./browser.ts";
import { matchedPipeline } from "../deployment.ts";

const FLEET = 20;
/** edge-02 and edge-04, both in the first batch, refuse the second config; edge-01 and edge-03 the third. */
const REFUSES = new Set([1, 3]);
const REFUSE_THIRD = new Set([0, 2]);
/** The last four are staging collectors: their source changes differently. */
const STAGING = 16;
const SLOW = 60_000;

let server: TestServer;
let browser: BrowserSession;
const agents: RawAgent[] = [];
/** What each client runs: the include path of the config it last applied. */
const running = new Map<number, string>();
/** Clients whose answers the test holds back, and the answers waiting. */
const held = new Set<number>();
const waiting = new Map<number, () => void>();
const ids: string[] = [];
const names = (i: number) => `edge-${String(i + 1).padStart(2, "0")}`;
const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);
let sources: { prod: string; staging: string };

/** Answers a pushed config: applied (recording its path), or refused with a message naming the path. */
function answer(agent: RawAgent, index: number, message: ServerToAgent) {
  const config = message.remoteConfig!;
  const body = new TextDecoder().decode(config.config!.configMap[""]!.body);
  const path = body.match(/- "(\/var\/log\/[^"]+)"/)![1]!;
  if ((REFUSES.has(index) && path.includes("/two/")) || (REFUSE_THIRD.has(index) && path.includes("/three/"))) {
    agent.send({ remoteConfigStatus: applied(config.configHash, RemoteConfigStatuses.RemoteConfigStatuses_FAILED, `cannot open ${path}`) });
    return;
  }
  running.set(index, path);
  agent.send({ remoteConfigStatus: applied(config.configHash) });
}

const setSources = async (prod: string, staging: string, message: string) => {
  await call(`/sources/${sources.prod}`, "PUT", { name: "prod logs", type: "filelog", config: { include: [prod] } });
  await call(`/sources/${sources.staging}`, "PUT", { name: "staging logs", type: "filelog", config: { include: [staging] } });
  await call("/commit", "POST", { message });
};

beforeAll(async () => {
  server = await startTestServer({ SVC_EXTERNALURL: "https://svc.example.com" });
  const url = `${server.base.replace(/^http/, "ws")}/v1/opamp`;
  for (let i = 0; i < FLEET; i++) {
    const { id } = await call<{ id: string }>("/collectors", "POST", { name: names(i), environment: i < STAGING ? "prod" : "staging" });
    const { token } = await call<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp", collectorId: id });
    const agent = await RawAgent.connect(url, token);
    agent.ws.addEventListener("message", () => {
      const message = agent.received[agent.received.length - 1]!;
      if (!message.remoteConfig) return;
      if (held.has(i)) waiting.set(i, () => answer(agent, i, message));
      else answer(agent, i, message);
    });
    await agent.call({ agentDescription: description({ "service.name": names(i) }) });
    agents.push(agent);
    ids.push(id);
  }
  const destination = await call<{ id: string }>("/destinations", "POST", {
    name: "backend",
    type: "otlphttp",
    config: { endpoint: "https://otlp.example.com" },
  });
  const made: Record<string, string> = {};
  for (const env of ["prod", "staging"] as const) {
    const source = await call<{ id: string }>("/sources", "POST", { name: `${env} logs`, type: "filelog", config: { include: [`/var/log/${env}/one/*.log`] } });
    made[env] = source.id;
    await matchedPipeline(call, `${env} logs`, source.id, destination.id, [`environment=${env}`]);
  }
  sources = { prod: made.prod!, staging: made.staging! };
  // The first config goes to everyone at once, through the API; the browser stages the change after it.
  await call("/commit", "POST", { message: "one" });
  await call("/publish", "POST");
  await until(async () => running.size === FLEET, 20_000, 50);
  await setSources("/var/log/prod/two/*.log", "/var/log/staging/two/*.log", "two");

  browser = await openBrowser({ width: 1280, height: 900 });
  await signIn(browser.page, server.base, await server.uiAdmin(), "/ui/changes");
}, SLOW);

afterAll(async () => {
  for (const agent of agents) agent.close();
  await browser?.close();
  await server?.stop();
});

const progress = () => browser.page.getByRole("region", { name: "Rollout progress" });
const batches = () => progress().getByRole("list", { name: "Batches" }).getByRole("listitem");
/** Waits until the progress line reads `text` (state, commit, collectors, batch). */
const line = (text: RegExp) => progress().getByText(text).waitFor();
/** Where client `i`'s source reads in config `version` ("one", "two", "three"). */
const pathOf = (i: number, version: string) => `/var/log/${i < STAGING ? "prod" : "staging"}/${version}/*.log`;
/** Clients `from`..`to` (exclusive) run `version`, but those that refuse it. */
const runAll = (from: number, to: number, version: string) =>
  until(async () => [...Array(to - from).keys()].every((k) => REFUSES.has(from + k) || running.get(from + k) === pathOf(from + k, version)), 20_000, 50);

test(
  "the plan reads as two changes, and a staged rollout in batches of 5 is confirmed",
  async () => {
    const { page } = browser;
    await page.getByRole("button", { name: "Review and publish" }).click();
    const plan = page.getByRole("form", { name: "Publish plan" });
    await plan.getByText("20 collectors change in 2 ways, 0 unchanged.").waitFor();
    const groups = plan.getByRole("list", { name: "Changes" }).getByRole("listitem");
    expect(await groups.count()).toBe(2);
    const prod = groups.filter({ hasText: "prod/two" });
    expect(await prod.getByRole("heading").textContent()).toBe("Change 1: 16 collectors");
    // The first five by name, linked; the rest counted.
    expect(await prod.getByRole("link").allTextContents()).toEqual(["edge-01", "edge-02", "edge-03", "edge-04", "edge-05"]);
    expect(await prod.getByRole("link", { name: "edge-01" }).getAttribute("href")).toBe(`/ui/collectors/${ids[0]}`);
    expect(await prod.textContent()).toContain("and 11 more");
    const staging = groups.filter({ hasText: "staging/two" });
    expect(await staging.getByRole("heading").textContent()).toBe("Change 2: 4 collectors");
    expect(await staging.getByRole("region", { name: "Diff of change 2" }).textContent()).toContain("/var/log/staging/one/*.log");

    await plan.getByLabel("Staged").check();
    await plan.getByLabel("Batch size").fill("5");
    await plan.getByLabel("Failure threshold (%)").fill("10");
    await browser.screenshot("staged-plan-1280");
    await phone(browser, "staged-plan-390");
    const request = page.waitForRequest((r) => r.url().endsWith("/api/v1/publish") && r.method() === "POST");
    await plan.getByRole("button", { name: "Confirm and publish" }).click();
    expect((await request).postDataJSON()).toEqual({ strategy: { batchSize: 5, pauseSeconds: 0, failureThreshold: 10 } });
    await page
      .getByRole("status")
      .getByText(/to 20 collectors; 20 get a new config in 4 batches\.$/)
      .waitFor();
  },
  SLOW,
);

test(
  "two failures in the first batch pause the rollout by itself, with the reason and the failures named",
  async () => {
    await line(/^Paused · commit \w+ · 20 collectors · batch 1 of 4$/);
    expect(await progress().locator(".pause-reason").textContent()).toBe(
      `Paused: 2 of 5 collectors in batch 1 failed (40 %, threshold 10 %); first: ${names([...REFUSES][0]!)}: cannot open /var/log/prod/two/*.log.`,
    );
    expect(await batches().count()).toBe(4);
    expect(await batches().nth(0).textContent()).toContain("5 collectors · released3 current, 2 failed");
    for (const n of [1, 2, 3]) expect(await batches().nth(n).textContent()).toContain("5 collectors · queued5 queued");
    const failures = progress().getByRole("region", { name: "Failures" });
    for (const i of REFUSES) {
      const row = failures.getByRole("row", { name: new RegExp(names(i)) });
      await row.waitFor();
      expect(await row.getByRole("cell").textContent()).toBe("cannot open /var/log/prod/two/*.log");
    }
    // Nothing past the first batch was sent the new config.
    for (let i = 5; i < FLEET; i++) expect(running.get(i)).toContain("/one/");
    expect(await progress().getByRole("button", { name: "Pause" }).count()).toBe(0);
    await browser.screenshot("staged-paused-1280");
  },
  SLOW,
);

test(
  "a viewer sees the batches without Pause, Resume or Abort",
  async () => {
    const invited = await server.call<{ inviteUrl: string }>("/users", "POST", { username: "vera", email: "vera@example.com", role: "viewer" });
    const token = new URL(invited.inviteUrl).searchParams.get("token")!;
    const viewer = await openBrowser({ width: 1280, height: 800 });
    try {
      expect((await viewer.context.request.post(`${server.base}/api/v1/session/invite`, { data: { token, password: "viewer-password-123" } })).status()).toBe(
        200,
      );
      await viewer.page.goto(`${server.base}/ui/changes`);
      const region = viewer.page.getByRole("region", { name: "Rollout progress" });
      await region.getByText(/batch 1 of 4$/).waitFor();
      expect(await region.getByRole("list", { name: "Batches" }).getByRole("listitem").count()).toBe(4);
      for (const name of ["Pause", "Resume", "Abort", "Review and publish"])
        expect(await viewer.page.getByRole("button", { name, exact: true }).count()).toBe(0);
      viewer.assertClean();
    } finally {
      await viewer.close();
    }
  },
  SLOW,
);

test(
  "Resume releases the next batches; Pause by the button holds the last one back",
  async () => {
    const { page } = browser;
    // The third batch's clients hold their answers, so the rollout is caught running.
    for (let i = 10; i < 15; i++) held.add(i);
    await progress().getByRole("button", { name: "Resume" }).click();
    await line(/^Running · commit \w+ · 20 collectors · batch 3 of 4$/);
    await until(async () => waiting.size === 5, 20_000, 50);
    await runAll(5, 10, "two");
    expect(await batches().nth(1).textContent()).toContain("5 current");
    expect(
      await progress()
        .getByText(/^Last batch expected/)
        .count(),
    ).toBe(1);
    await browser.screenshot("staged-running-1280");

    await progress().getByRole("button", { name: "Pause" }).click();
    await line(/^Paused · commit \w+ · 20 collectors · batch 3 of 4$/);
    expect(await progress().locator(".pause-reason").textContent()).toBe("Paused: paused by user:admin.");
    // The third batch applies; paused, the fourth stays queued.
    for (const reply of waiting.values()) reply();
    held.clear();
    await runAll(10, 15, "two");
    await batches().nth(2).getByText("5 current").waitFor();
    await Bun.sleep(1500);
    expect(await batches().nth(3).textContent()).toContain("queued5 queued");
    for (let i = 15; i < FLEET; i++) expect(running.get(i)).toContain("/one/");
    await page.getByRole("button", { name: "Resume" }).waitFor();
  },
  SLOW,
);

test(
  "Resume again: the last batch goes out and the rollout finishes",
  async () => {
    await progress().getByRole("button", { name: "Resume" }).click();
    await line(/^Completed with errors · commit \w+ · 20 collectors · batch 4 of 4$/);
    await runAll(15, FLEET, "two");
    expect(await batches().nth(3).textContent()).toContain("released5 current");
    expect(await progress().getByRole("button").count()).toBe(0);
    expect(
      await progress()
        .getByText(/^Last batch expected/)
        .count(),
    ).toBe(0);
    await browser.screenshot("staged-completed-1280");
    await phone(browser, "staged-completed-390");
  },
  SLOW,
);

test(
  "a second staged rollout is aborted, rolling its failed collectors back",
  async () => {
    const { page } = browser;
    await setSources("/var/log/prod/three/*.log", "/var/log/staging/three/*.log", "three");
    await page.getByRole("button", { name: "Review and publish" }).click();
    const plan = page.getByRole("form", { name: "Publish plan" });
    await plan.getByText("20 collectors change in 2 ways, 0 unchanged.").waitFor();
    await plan.getByLabel("Staged").check();
    await plan.getByLabel("Batch by").selectOption("percent");
    await plan.getByLabel("Batch percent").fill("25");
    await plan.getByRole("button", { name: "Confirm and publish" }).click();
    // The form kept the 10 % threshold: edge-01's and edge-03's refusals pause it.
    await line(/^Paused · commit \w+ · 20 collectors · batch 1 of 4$/);

    await progress().getByRole("button", { name: "Abort" }).click();
    const form = progress().getByRole("form", { name: "Abort the rollout" });
    await form.getByLabel("Also roll the 2 collectors that failed back to their previous config").check();
    await browser.screenshot("staged-abort-1280");
    await form.getByRole("button", { name: "Abort rollout" }).click();
    await progress().getByText("Aborted; 2 collectors rolled back.").waitFor();
    // The two that refused are sent the config they ran before, and run it; the others of the batch keep the new one.
    await until(
      async () =>
        [...REFUSE_THIRD].every((i) => running.get(i) === "/var/log/prod/two/*.log" && agents[i]!.received.filter((m) => m.remoteConfig).length === 4),
      20_000,
      50,
    );
    for (const i of REFUSES) expect(running.get(i)).toBe("/var/log/prod/three/*.log");
    // The batches not released keep what they ran.
    for (let i = 5; i < FLEET; i++) expect(running.get(i)).toContain("/two/");
  },
  SLOW,
);

test("no console or page errors during the run", () => {
  browser.assertClean();
});
