/**
 * The collector page in Debian's chromium against the real server, from data
 * made through the API: header facts, throughput charts once the collector
 * pushed its own metrics, the target config, two published versions with a
 * diff between them, rollback to the older one (it becomes the target), token
 * rotation (shown once; the old token stops working), activating and
 * deactivating a source, and a viewer's read-only page. Desktop and phone
 * screenshots, no console errors.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { deploymentKit } from "../deployment.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { create } from "@bufbuild/protobuf";
import { AgentConfigObjectSchema, AgentConfigMapSchema, EffectiveConfigSchema } from "../../server/gen/opamp/v1/opamp_pb.ts";
import { applied, description, RawAgent } from "../opamp/helpers.ts";
import { openBrowser, type BrowserSession } from "./browser.ts";

let server: TestServer;
let browser: BrowserSession;
let collectorId: string;
let metricsToken: string;
let agent: RawAgent | undefined;
const SLOW = 30_000;

const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);

/** One OTLP JSON export holding cumulative counters named like a collector's own metrics, at `seconds`. */
function metrics(seconds: number, accepted: number) {
  const point = (value: number, attributes: Record<string, string>) => ({
    attributes: Object.entries(attributes).map(([key, v]) => ({ key, value: { stringValue: v } })),
    startTimeUnixNano: "1000000000",
    timeUnixNano: String(BigInt(seconds) * 1_000_000_000n),
    asDouble: value,
  });
  const sum = (name: string, value: number, attributes: Record<string, string>) => ({
    name,
    sum: { aggregationTemporality: 2, isMonotonic: true, dataPoints: [point(value, attributes)] },
  });
  return {
    resourceMetrics: [
      {
        scopeMetrics: [
          {
            metrics: [
              sum("otelcol_receiver_accepted_log_records", accepted, { receiver: "filelog/app" }),
              sum("otelcol_exporter_sent_log_records", accepted, { exporter: "otlphttp/backend" }),
              sum("otelcol_exporter_send_failed_log_records", accepted / 100, { exporter: "otlphttp/backend" }),
              sum("otelcol_process_uptime", seconds, {}),
            ],
          },
        ],
      },
    ],
  };
}

function pushMetrics(token: string, body: unknown): Promise<Response> {
  return fetch(`${server.base}/v1/metrics`, {
    method: "POST",
    headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
    body: JSON.stringify(body),
  });
}

beforeAll(async () => {
  server = await startTestServer({ SVC_EXTERNALURL: "https://svc.example.com" });
  browser = await openBrowser({ width: 1280, height: 800 });
  browser.page.on("dialog", (dialog) => void dialog.accept());
  const collector = await call<{ id: string }>("/collectors", "POST", { name: "web-1", environment: "prod", tags: { team: "payments" } });
  collectorId = collector.id;
  const routeThrough = await deploymentKit(call);
  await routeThrough(collectorId, "/var/log/one/*.log");
  await call("/commit", "POST", { message: "one" });
  await call(`/publish/${collectorId}`, "POST");
  const [active] = (await call<{ items: { sourceId: string }[] }>(`/collectors/${collectorId}/sources`)).items;
  await call(`/collectors/${collectorId}/sources`, "POST", { sourceId: active!.sourceId, configOverrides: { include: ["/var/log/two/*.log"] } });
  await call("/commit", "POST", { message: "two" });
  await call(`/publish/${collectorId}`, "POST");
  await call("/sources", "POST", { name: "audit logs", type: "filelog", config: { include: ["/var/log/audit/*.log"] } });

  metricsToken = (await call<{ token: string }>(`/collectors/${collectorId}/otlp-token`, "POST")).token;
  for (const [seconds, accepted] of [
    [1000, 0],
    [1010, 1000],
  ] as const) {
    expect((await pushMetrics(metricsToken, metrics(seconds, accepted))).status).toBe(200);
  }

  const admin = await server.uiAdmin();
  const { page } = browser;
  await page.goto(`${server.base}/ui/login?next=${encodeURIComponent(`/ui/collectors/${collectorId}`)}`);
  await page.getByLabel("Username").fill(admin.username);
  await page.getByLabel("Password").fill(admin.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL(/\/ui\/collectors\/[^/]+$/);
}, SLOW);

afterAll(async () => {
  agent?.close();
  await browser?.close();
  await server?.stop();
});

const fact = (label: string) => browser.page.getByRole("table", { name: "Collector facts" }).getByRole("row", { name: label }).getByRole("cell");

test(
  "the header shows the collector's facts",
  async () => {
    const { page } = browser;
    await page.getByRole("heading", { level: 1, name: "web-1" }).waitFor();
    expect(await fact("Environment").textContent()).toBe("prod");
    expect(await fact("Management").textContent()).toBe("OpenTelemetry Collector (OpAMP)");
    expect(await fact("Tags").textContent()).toBe("team=payments");
    expect(await fact("Status").textContent()).toContain("pending");
    expect(await fact("Last seen").textContent()).toBe("never");
    expect(await fact("Collector id").textContent()).toBe(collectorId);
  },
  SLOW,
);

test(
  "the Pipelines section says which pipelines apply and why: a route, or matchers its attributes satisfy",
  async () => {
    const { page } = browser;
    const fleet = await call<{ id: string }>("/pipelines", "POST", {
      name: "payments fleet",
      signal: "logs",
      matchers: ["team=payments", 'environment=~"pro.*"'],
    });
    try {
      await page.reload();
      const section = page.getByRole("region", { name: "Pipelines" });
      await section.getByRole("link", { name: "payments fleet" }).waitFor();
      const items = await section.locator(".applied-pipelines > li").allTextContents();
      expect(items).toHaveLength(2);
      expect(items[0]).toContain("via route (explicit assignment)");
      expect(items[1]).toStartWith("payments fleet matches all of its matchers:");
      // Each matcher with the attribute it read and where that comes from.
      expect(await section.locator(".matcher-reasons li").allTextContents()).toEqual([
        'team=payments — team is "payments" (set in svc)',
        'environment=~"pro.*" — environment is "prod" (set in svc)',
      ]);
    } finally {
      await call(`/pipelines/${fleet.id}`, "DELETE");
    }
  },
  SLOW,
);

test(
  "throughput charts and figures appear once metrics were posted",
  async () => {
    const { page } = browser;
    // The charts come from the history (test/ui/throughput.test.ts checks their values); the tables give the live rates.
    const records = page.getByRole("figure", { name: "Records per second in and out" });
    await records.waitFor();
    expect(await records.locator("canvas").count()).toBeGreaterThan(0);
    expect(await records.getByRole("list").textContent()).toContain("logs in");
    await page.getByRole("figure", { name: "Errors per second" }).waitFor();
    const row = page.getByRole("region", { name: "Components" }).getByRole("row", { name: /otlphttp\/backend/ });
    expect(await row.getByRole("cell").allTextContents()).toEqual(["exporter", "logs", "101/s", "100/s", "1.00/s"]);
    await page.getByText("Uptime").waitFor();
    expect(
      await page
        .getByRole("definition")
        .filter({ hasText: /^\d+m \d+s$/ })
        .textContent(),
    ).toBe("16m 50s");
  },
  SLOW,
);

test(
  "the target config, and a diff between the two published versions",
  async () => {
    const { page } = browser;
    const target = page.getByRole("region", { name: "Target config" });
    expect(await target.textContent()).toContain("/var/log/two/*.log");
    const history = page.getByRole("region", { name: "Config history" });
    await history.getByRole("row", { name: /Version 2/ }).waitFor();
    expect(await history.locator("tbody tr").count()).toBe(2);
    expect(await history.getByRole("row", { name: /Version 2/ }).textContent()).toContain("target");

    await history.getByRole("button", { name: "Compare version 2" }).click();
    const diff = page.getByRole("region", { name: "Changes in version 2" });
    await diff.waitFor();
    const removed = await diff.locator("tr", { hasText: "/var/log/one/*.log" }).textContent();
    const added = await diff.locator("tr", { hasText: "/var/log/two/*.log" }).textContent();
    expect(removed).toContain("−");
    expect(added).toContain("+");
    await page.getByRole("heading", { name: "Version 2 against version 1" }).waitFor();
    await browser.screenshot("collector-detail-1280");
  },
  SLOW,
);

test(
  "rolling back to version 1 makes it the target",
  async () => {
    const { page } = browser;
    const history = page.getByRole("region", { name: "Config history" });
    expect(await page.getByRole("button", { name: "Roll back to version 2" }).count()).toBe(0);
    await page.getByRole("button", { name: "Roll back to version 1" }).click();
    await page.getByRole("status").getByText("Rolled back to version 1: version 3 is now the target (outdated).").waitFor();
    const newest = history.getByRole("row", { name: /Version 3/ });
    await newest.waitFor();
    expect(await newest.textContent()).toContain("target");
    expect(await newest.textContent()).toContain("rollback to version 1");
    expect(await history.getByRole("row", { name: /Version 2/ }).textContent()).not.toContain("target");
    // The target config follows (live config_target event, or the page's own refresh).
    await page
      .getByRole("region", { name: "Target config" })
      .getByText(/\/var\/log\/one\/\*\.log/)
      .waitFor();
    const { items } = await call<{ items: { seq: number; rollbackOf?: number }[] }>(`/collectors/${collectorId}/config-history`);
    expect(items.at(-1)).toMatchObject({ seq: 3, rollbackOf: 1 });
  },
  SLOW,
);

test(
  "rotating the token shows the new one once; the old one stops working",
  async () => {
    const { page } = browser;
    await page.getByRole("button", { name: "Rotate token" }).click();
    const box = page.getByLabel("New collector token");
    await box.waitFor();
    const token = await box.inputValue();
    expect(token).toMatch(/^svcct_/);
    expect(await page.getByRole("note").textContent()).toContain("The previous token no longer works");
    expect((await pushMetrics(metricsToken, metrics(1020, 2000))).status).toBe(401);
    expect((await pushMetrics(token, metrics(1020, 2000))).status).toBe(200);
    // Shown once: a reload does not bring it back.
    await page.reload();
    await page.getByRole("heading", { level: 1, name: "web-1" }).waitFor();
    expect(await page.getByLabel("New collector token").count()).toBe(0);
  },
  SLOW,
);

test(
  "a source is activated from the working tree, then deactivated",
  async () => {
    const { page } = browser;
    const sources = page.getByRole("region", { name: "Sources" });
    await sources.getByRole("button", { name: "Deactivate app logs" }).waitFor();
    await sources.getByLabel("Source", { exact: true }).selectOption({ label: "audit logs (filelog)" });
    await sources.getByLabel("Config overrides (JSON, optional)").fill("{not json");
    await sources.getByRole("button", { name: "Activate source" }).click();
    await sources.getByText(/^Not valid JSON/).waitFor();
    await sources.getByLabel("Config overrides (JSON, optional)").fill('{"include": ["/srv/audit/*.log"]}');
    await sources.getByRole("button", { name: "Activate source" }).click();
    await sources.getByRole("button", { name: "Deactivate audit logs" }).waitFor();
    expect(await sources.getByRole("listitem").filter({ hasText: "audit logs" }).textContent()).toContain("/srv/audit/*.log");
    let active = await call<{ items: { sourceId: string }[] }>(`/collectors/${collectorId}/sources`);
    expect(active.items).toHaveLength(2);

    // app logs is still routed: the API's refusal is shown with its details.
    await sources.getByRole("button", { name: "Deactivate app logs" }).click();
    await sources
      .getByRole("alert")
      .getByText(/HTTP 409/)
      .waitFor();

    await sources.getByRole("button", { name: "Deactivate audit logs" }).click();
    await sources.getByRole("button", { name: "Deactivate audit logs" }).waitFor({ state: "detached" });
    active = await call<{ items: { sourceId: string }[] }>(`/collectors/${collectorId}/sources`);
    expect(active.items).toHaveLength(1);
  },
  SLOW,
);

test(
  "a collector connecting over OpAMP turns online live, applies its target and reports what it runs",
  async () => {
    const { page } = browser;
    const { token } = await call<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp", collectorId });
    agent = await RawAgent.connect(`${server.base.replace(/^http/, "ws")}/v1/opamp`, token);
    const pushed = agent.next((m) => m.remoteConfig !== undefined, 10_000);
    await agent.call({ agentDescription: description({ "service.name": "web" }) });
    // No reload: the collector event moves the header.
    await page.getByRole("table", { name: "Collector facts" }).getByRole("row", { name: "Status" }).getByText("online").waitFor();

    const message = await pushed;
    const body = new TextDecoder().decode(message.remoteConfig!.config!.configMap[""]!.body);
    const effectiveConfig = create(EffectiveConfigSchema, {
      configMap: create(AgentConfigMapSchema, {
        configMap: { "collector.yaml": create(AgentConfigObjectSchema, { body: new TextEncoder().encode(body), contentType: "text/yaml" }) },
      }),
    });
    await agent.call({ remoteConfigStatus: applied(message.remoteConfig!.configHash), effectiveConfig });
    // The config_target event refreshes the config parts.
    await page.getByText(/delivery state current/).waitFor();
    const reported = page.getByRole("region", { name: /Reported by the collector collector\.yaml/ });
    await reported.waitFor();
    expect(await reported.textContent()).toContain("/var/log/one/*.log");
  },
  SLOW,
);

test(
  "the page fits a 390 px phone",
  async () => {
    const { page } = browser;
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await page.getByRole("figure", { name: "Records per second in and out" }).waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBe(0);
    await browser.screenshot("collector-detail-390");
    await page.setViewportSize({ width: 1280, height: 800 });
  },
  SLOW,
);

test("no console or page errors during the admin's run", () => {
  browser.assertClean();
});

test(
  "a viewer sees the page without rollback, rotation or activation controls",
  async () => {
    const invited = await call<{ inviteUrl: string }>("/users", "POST", { username: "vic", email: "vic@example.com", role: "viewer" });
    const token = new URL(invited.inviteUrl).searchParams.get("token")!;
    const viewer = await openBrowser({ width: 1280, height: 800 });
    try {
      const res = await viewer.context.request.post(`${server.base}/api/v1/session/invite`, { data: { token, password: "viewer-password-123" } });
      expect(res.status()).toBe(200);
      await viewer.page.goto(`${server.base}/ui/collectors/${collectorId}`);
      await viewer.page
        .getByRole("region", { name: "Config history" })
        .getByRole("row", { name: /Version 3/ })
        .waitFor();
      await viewer.page.getByRole("region", { name: "Sources" }).getByText("app logs").waitFor();
      expect(await viewer.page.getByRole("button", { name: /^(Roll back|Rotate token|Activate|Deactivate)/ }).count()).toBe(0);
      expect(await viewer.page.getByRole("button", { name: "Compare version 3" }).count()).toBe(1);
      viewer.assertClean();
    } finally {
      await viewer.close();
    }
  },
  SLOW,
);
