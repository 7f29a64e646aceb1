/**
 * Every page of the UI photographed at a laptop's 1440×900 and a phone's
 * 390×844 (issue 24 part 9), against the real server with a small realistic
 * fleet: OpAMP test clients that applied, failed and left, one never
 * connected, an Alloy collector, a real host agent, a source, a destination,
 * a matched pipeline and a routed one, a published commit, a pending change,
 * users, a service account and the audit trail all that leaves. The empty
 * lists are shot first, before anything exists. For each page: no console
 * or page error, no horizontal scroll of the document (scrollbars overlaid),
 * one <h1> and the page's title. The PNGs land in test-results/screens/<page>-<width>.png
 * (git-ignored) for a person to look at.
 */
import type { Subprocess } from "bun";
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { RemoteConfigStatuses } from "../../server/gen/opamp/v1/opamp_pb.ts";
import { deploymentKit, matchedPipeline } from "../deployment.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { applied, description, RawAgent, until } from "../opamp/helpers.ts";
import { pushLogFlow } from "../telemetry/points.ts";
import { startAgent, stopAgents, untilConnected } from "./agents.ts";
import { openBrowser, signIn, type BrowserSession } from "./browser.ts";

const SCREENS = resolve(import.meta.dir, "../../test-results/screens");
/** SCREENS=dashboard,collectors shoots only those pages, for a quick look while restyling one. */
const ONLY = process.env.SCREENS ? new Set(process.env.SCREENS.split(",")) : null;
const SIZES = [
  { width: 1440, height: 900 },
  { width: 390, height: 844 },
] as const;

let server: TestServer;
let browser: BrowserSession;
let dir: string;
const agents: RawAgent[] = [];
const hostAgents: Subprocess[] = [];
const ids: Record<string, string> = {};
const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);

interface Screen {
  name: string;
  path: () => string;
  title: string;
  /** The <h1>'s text once the page has loaded. */
  heading: string | RegExp;
  /** Text that shows the page's data has arrived, when the heading alone does not. */
  ready?: string | RegExp;
}

/**
 * Opens `screen` at each size and checks it; the shots are full pages. Errors
 * are compared before and after so each page answers for its own.
 */
async function shoot(screen: Screen): Promise<void> {
  if (ONLY && !ONLY.has(screen.name)) return;
  const { page } = browser;
  const before = browser.errors.length;
  for (const size of SIZES) {
    await page.setViewportSize(size);
    await page.goto(`${server.base}${screen.path()}`);
    await page.getByRole("heading", { level: 1, name: screen.heading }).waitFor();
    if (screen.ready) await page.getByText(screen.ready).first().waitFor();
    // Lists and panels fill from separate calls: wait until none says it is loading, then let the layout settle.
    await until(
      async () =>
        (await page
          .locator("main")
          .getByText(/^Loading…$/)
          .count()) === 0,
      10_000,
      100,
    );
    await page.waitForTimeout(300);
    expect(await page.title()).toBe(screen.title);
    expect(await page.locator("h1").count()).toBe(1);
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    // The whole page inside the viewport: Chromium paints a scrolling box only near the viewport, so a tall one shot below it came out blank.
    const height = await page.evaluate(() => document.documentElement.scrollHeight);
    await page.setViewportSize({ width: size.width, height: Math.max(size.height, height) });
    await page.screenshot({ path: join(SCREENS, `${screen.name}-${size.width}.png`), fullPage: true });
    if (overflow > 0) throw new Error(`${screen.name} at ${size.width} px scrolls sideways by ${overflow} px`);
  }
  const errors = browser.errors.slice(before);
  if (errors.length > 0) throw new Error(`${screen.name}: ${errors.join("\n")}`);
}

const page = (name: string, path: string, title: string, heading: string | RegExp, ready?: string | RegExp): Screen => ({
  name,
  path: () => path,
  title: `${title} · svc`,
  heading,
  ready,
});

beforeAll(async () => {
  mkdirSync(SCREENS, { recursive: true });
  dir = mkdtempSync(join(tmpdir(), "svc-ui-screens-"));
  server = await startTestServer({ SVC_EXTERNALURL: "https://svc.example.com" });
  browser = await openBrowser({ width: 1440, height: 900 });
  // Overlay scrollbars, as phones have: a full-page shot is otherwise cut by the scrollbar's width.
  const cdp = await browser.context.newCDPSession(browser.page);
  await cdp.send("Emulation.setScrollbarsHidden", { hidden: true });
}, 30_000);

afterAll(async () => {
  for (const agent of agents) agent.close();
  await stopAgents(hostAgents);
  await browser?.close();
  await server?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test("signed out: the login page and an unknown page", async () => {
  await shoot(page("login", "/ui/login", "Sign in", "Sign in to svc"));
  const admin = await server.uiAdmin();
  await signIn(browser.page, server.base, admin, "/ui/dashboard");
  await shoot(page("not-found", "/ui/no-such-page", "Not found", "Page not found"));
}, 60_000);

test("an empty install: each list says what to do next", async () => {
  for (const screen of [
    page("empty-dashboard", "/ui/dashboard", "Dashboard", "Dashboard", "No collectors yet"),
    page("empty-collectors", "/ui/collectors", "Collectors", "Collectors"),
    page("empty-pipelines", "/ui/pipelines", "Pipelines", "Pipelines"),
    page("empty-sources", "/ui/sources", "Sources", "Sources"),
    page("empty-destinations", "/ui/destinations", "Destinations", "Destinations"),
    page("empty-routes", "/ui/routes", "Routes", "Routes"),
    page("empty-changes", "/ui/changes", "Changes", "Changes"),
    page("empty-hosts", "/ui/hosts", "Hosts", "Hosts"),
    page("empty-webhooks", "/ui/webhooks", "Webhooks", "Webhooks", "0 webhooks."),
  ]) {
    await shoot(screen);
  }
}, 120_000);

const push = (collectorId: string, seconds: number, accepted: number, failed: number) => pushLogFlow(server, collectorId, seconds, accepted, failed);

test("a small fleet is seeded through the API and real clients", async () => {
  const source = await call<{ id: string }>("/sources", "POST", { name: "nginx-access", type: "filelog", config: { include: ["/var/log/nginx/access.log"] } });
  const destination = await call<{ id: string }>("/destinations", "POST", {
    name: "otlp-gateway",
    type: "otlphttp",
    config: { endpoint: "https://otlp.example.com" },
  });
  ids.pipeline = (await matchedPipeline(call, "edge-logs", source.id, destination.id, ["env=prod", "role=edge"])).id;
  const route = await deploymentKit(call);
  const names = ["edge-fra-1", "edge-fra-2", "edge-ams-1", "batch-worker", "new-host"];
  for (const name of names) {
    const edge = name.startsWith("edge");
    ids[name] = (
      await call<{ id: string }>("/collectors", "POST", { name, environment: "prod", tags: edge ? { env: "prod", role: "edge" } : { env: "prod" } })
    ).id;
  }
  ids["alloy-metrics"] = (
    await call<{ id: string }>("/collectors", "POST", { name: "alloy-metrics", managementMode: "rcfg-remotecfg", environment: "staging" })
  ).id;
  await route(ids["batch-worker"]!);
  await call("/commit", "POST", { message: "Ship nginx access logs from the edge to the gateway" });

  const connect = async (name: string) => {
    const { token } = await server.app.collectorTokens.mint({ actor: "test", remoteAddr: null }, ids[name]!);
    const agent = await RawAgent.connect(`${server.base.replace(/^http/, "ws")}/v1/opamp`, token);
    agents.push(agent);
    await agent.call({ agentDescription: description({ "service.name": name, "host.name": `${name}.example.net` }) });
    return agent;
  };
  const fra1 = await connect("edge-fra-1");
  const fra2 = await connect("edge-fra-2");
  const worker = await connect("batch-worker");
  const ams = await connect("edge-ams-1");
  ams.send({ agentDisconnect: {} });
  await until(async () => (await server.app.collectors.get(ids["edge-ams-1"]!)).status === "offline");

  const offers = [fra1, fra2, worker].map((agent) => agent.next((m) => m.remoteConfig !== undefined, 10_000));
  await call("/publish", "POST");
  const [c1, c2, c3] = (await Promise.all(offers)).map((m) => m.remoteConfig!);
  await fra1.call({ remoteConfigStatus: applied(c1!.configHash) });
  await worker.call({ remoteConfigStatus: applied(c3!.configHash) });
  await fra2.call({ remoteConfigStatus: applied(c2!.configHash, RemoteConfigStatuses.RemoteConfigStatuses_FAILED, "receiver filelog: permission denied") });
  for (const [name, perSecond, errors] of [
    ["edge-fra-1", 420, 0],
    ["edge-fra-2", 35, 3],
    ["batch-worker", 120, 0],
  ] as const) {
    await push(ids[name]!, 1000, 0, 0);
    await push(ids[name]!, 1010, perSecond * 10, errors * 10);
  }

  // A pending change beside the published commit, so Changes shows both.
  await call("/destinations", "POST", { name: "archive", type: "otlphttp", config: { endpoint: "https://archive.example.com" } });
  ids.invite = new URL((await call<{ inviteUrl: string }>("/users", "POST", { username: "nora", email: "nora@example.com", role: "editor" })).inviteUrl).search;
  await call("/service-accounts", "POST", { name: "ci-deployer", scopes: ["config:read", "config:write"] });
  await call("/webhooks", "POST", {
    url: "https://hooks.example.com/svc",
    events: ["rollout.failed", "collector.offline"],
    secret: "screens-signing-secret-0123",
  });
  await call("/enrollment-tokens", "POST", { kind: "opamp" });
  const { token } = await call<{ token: string }>("/enrollment-tokens", "POST", { kind: "agent", maxUses: 1 });
  // The log browser opens on a directory of logs, not on the agent's own config beside them.
  const logs = join(dir, "logs");
  mkdirSync(logs);
  writeFileSync(join(logs, "app.log"), "GET /healthz 200\nGET /api/orders 201\n");
  hostAgents.push(startAgent(server, dir, "web-01", token, `  allowedRoots: [${realpathSync(logs)}]`));
  await untilConnected(server, "web-01");
  ids.commit = (await call<{ items: { commit: string }[] }>("/commits?limit=1")).items[0]!.commit;
}, 60_000);

test("every page of the seeded install", async () => {
  const screens: Screen[] = [
    page("dashboard", "/ui/dashboard", "Dashboard", "Dashboard", "completed with failures"),
    page("collectors", "/ui/collectors", "Collectors", "Collectors", "edge-fra-2"),
    { ...page("collector-detail", "", "Collectors", "edge-fra-2", "receiver filelog: permission denied"), path: () => `/ui/collectors/${ids["edge-fra-2"]}` },
    page("pipelines", "/ui/pipelines", "Pipelines", "Pipelines", "edge-logs"),
    { ...page("pipeline-editor", "", "Pipelines", "edge-logs"), path: () => `/ui/pipelines/${ids.pipeline}` },
    page("sources", "/ui/sources", "Sources", "Sources", "nginx-access"),
    page("destinations", "/ui/destinations", "Destinations", "Destinations", "otlp-gateway"),
    page("routes", "/ui/routes", "Routes", "Routes", "batch-worker"),
    page("changes", "/ui/changes", "Changes", "Changes", "Ship nginx access logs from the edge to the gateway"),
    { ...page("commit", "", "Changes", "Changes", "Ship nginx access logs from the edge to the gateway"), path: () => `/ui/changes?commit=${ids.commit}` },
    page("rollouts", "/ui/rollouts", "Rollouts", "Rollouts", "completed with failures"),
    page("audit", "/ui/audit", "Audit", "Audit", "config.commit"),
    page("users", "/ui/users", "Users", "Users", "nora"),
    page("service-accounts", "/ui/service-accounts", "Service accounts", "Service accounts", "ci-deployer"),
    page("hosts", "/ui/hosts", "Hosts", "Hosts", "web-01"),
    // The agent names its host by the machine's hostname.
    page("host-detail", "/ui/hosts/web-01", "Hosts", hostname(), "web-01"),
    page("onboarding", "/ui/onboarding", "Onboarding", "Onboarding"),
    page("system", "/ui/system", "System", "System", "Control plane"),
    page("webhooks", "/ui/webhooks", "Webhooks", "Webhooks", "hooks.example.com"),
    // The invite link stands alone, outside the shell.
    { ...page("invite", "", "Accept invite", "Welcome to svc"), path: () => `/ui/invite${ids.invite}` },
  ];
  const failures: string[] = [];
  for (const screen of screens) {
    try {
      await shoot(screen);
    } catch (error) {
      failures.push(`${screen.name}: ${(error as Error).message}`);
    }
  }
  expect(failures).toEqual([]);
}, 240_000);

test("on a phone the navigation folds behind Menu and unfolds as a column", async () => {
  const { page: tab } = browser;
  await tab.setViewportSize({ width: 390, height: 844 });
  await tab.goto(`${server.base}/ui/collectors`);
  const nav = tab.getByRole("navigation", { name: "Main" });
  const menu = tab.getByRole("button", { name: "Menu" });
  await menu.waitFor();
  expect(await nav.isVisible()).toBe(false);
  expect(await menu.getAttribute("aria-expanded")).toBe("false");
  await menu.click();
  expect(await menu.getAttribute("aria-expanded")).toBe("true");
  expect(await nav.getByRole("link", { name: "Collectors" }).getAttribute("aria-current")).toBe("page");
  await tab.screenshot({ path: join(SCREENS, "menu-open-390.png") });
  // Following a link folds it again.
  await nav.getByRole("link", { name: "Audit" }).click();
  await tab.getByRole("heading", { level: 1, name: "Audit" }).waitFor();
  expect(await nav.isVisible()).toBe(false);
  // At a laptop's width there is no Menu button and every link is in view.
  await tab.setViewportSize({ width: 1440, height: 900 });
  expect(await menu.isVisible()).toBe(false);
  // …on one line inside the page.
  const boxes = await Promise.all((await nav.getByRole("link").all()).map(async (link) => (await link.boundingBox())!));
  expect(new Set(boxes.map((box) => Math.round(box.y))).size).toBe(1);
  expect(Math.max(...boxes.map((box) => box.x + box.width))).toBeLessThanOrEqual(1440);
}, 30_000);

/** Relative luminance (WCAG: 0 black, 1 white) of a computed CSS colour, rgb() or rgba(). */
function luminance(color: string): number {
  const [r, g, b] = (color.match(/[\d.]+/g) ?? []).slice(0, 3).map((c) => {
    const v = Number(c) / 255;
    return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  });
  if (b === undefined) throw new Error(`not an rgb() colour: ${color}`);
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b;
}

test("the dark theme on the dashboard and a collector", async () => {
  const { page: tab } = browser;
  /** The body's background and text as the browser computed them, by luminance. */
  const shades = async () => {
    const [background, text] = await tab.evaluate(() => [getComputedStyle(document.body).backgroundColor, getComputedStyle(document.body).color]);
    return { background: luminance(background!), text: luminance(text!) };
  };
  await tab.emulateMedia({ colorScheme: "dark" });
  await shoot(page("dark-dashboard", "/ui/dashboard", "Dashboard", "Dashboard", "completed with failures"));
  await shoot({ ...page("dark-collector-detail", "", "Collectors", "edge-fra-2"), path: () => `/ui/collectors/${ids["edge-fra-2"]}` });
  // The screenshots above are only worth something if the theme applied: light text on a dark page, and back.
  await tab.goto(`${server.base}/ui/dashboard`);
  await tab.getByRole("heading", { level: 1, name: "Dashboard" }).waitFor();
  const dark = await shades();
  await tab.emulateMedia({ colorScheme: "light" });
  const light = await shades();
  expect(dark.background).toBeLessThan(0.1);
  expect(dark.text).toBeGreaterThan(0.5);
  expect(light.background).toBeGreaterThan(0.8);
  expect(light.text).toBeLessThan(0.1);
}, 60_000);

test("no console or page errors during the run", () => {
  browser.assertClean();
});
