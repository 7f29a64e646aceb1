/**
 * A tag or environment edit that changes what collectors run is a deployment
 * (issue 33 part 3), in Debian's chromium against the real server: a bulk
 * tag edit in the collectors list and a settings edit on a collector's page
 * first show the plan (which collectors change, the diff) and write nothing
 * until confirmed; cancelled, nothing changes; confirmed, the edit is
 * delivered as a rollout of kind attributes under the user's name (staged
 * when asked). An edit that changes no config is saved at once. A fleet
 * publish skips a collector whose config cannot be rendered, and the
 * progress and its page say why (part 4). No console errors.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Collector } from "../../shared/collectors.ts";
import type { RolloutSummary } from "../../shared/rollouts.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { matchedPipeline } from "../deployment.ts";
import { openBrowser, signIn, type BrowserSession } from "./browser.ts";

let server: TestServer;
let browser: BrowserSession;
const ids: Record<string, string> = {};
const SLOW = 30_000;

const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);
const collector = (name: string) => call<Collector>(`/collectors/${ids[name]}`);
const latestRollout = async () => (await call<{ items: RolloutSummary[] }>("/rollouts?limit=1")).items[0];

beforeAll(async () => {
  server = await startTestServer();
  browser = await openBrowser({ width: 1280, height: 800 });
  const source = await call<{ id: string }>("/sources", "POST", { name: "edge logs", type: "filelog", config: { include: ["/var/log/edge/*.log"] } });
  const prodSource = await call<{ id: string }>("/sources", "POST", { name: "prod logs", type: "filelog", config: { include: ["/var/log/prod/*.log"] } });
  const destination = await call<{ id: string }>("/destinations", "POST", {
    name: "backend",
    type: "otlphttp",
    config: { endpoint: "https://otlp.example.com" },
  });
  await matchedPipeline(call, "edge", source.id, destination.id, ["team=edge"]);
  await matchedPipeline(call, "prod", prodSource.id, destination.id, ["environment=prod"]);
  for (const name of ["ui-edge-1", "ui-edge-2"]) ids[name] = (await call<{ id: string }>("/collectors", "POST", { name, tags: { site: "s1" } })).id;
  await call("/commit", "POST", { message: "Edge and prod pipelines" });
  await call("/publish", "POST");
  const admin = await server.uiAdmin();
  browser.page.setDefaultTimeout(10_000);
  await signIn(browser.page, server.base, admin, "/ui/collectors");
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

test(
  "a bulk tag edit that changes configs shows its plan first; cancelled it writes nothing, confirmed staged it is a rollout of kind attributes",
  async () => {
    const { page } = browser;
    await page.getByRole("checkbox", { name: "Select all loaded collectors" }).check();
    const bar = page.getByRole("region", { name: "2 selected" });
    await bar.getByLabel("Tags to set").fill("team=edge");
    await bar.getByRole("button", { name: "Set tags" }).click();
    const plan = page.getByRole("form", { name: "Setting tags team=edge: plan" });
    await plan.getByText("This edit changes the config of 2 collectors").waitFor();
    await plan.getByText("2 collectors change in 1 way, 0 unchanged.").waitFor();
    expect(await plan.getByRole("region", { name: /^Diff of change/ }).textContent()).toContain("/var/log/edge/*.log");
    await browser.screenshot("attribute-plan-1280");
    // Nothing is written while the plan is shown, nor once it is cancelled.
    expect((await collector("ui-edge-1")).tags).toEqual({ site: "s1" });
    await plan.getByRole("button", { name: "Cancel" }).click();
    expect(await plan.count()).toBe(0);
    expect((await collector("ui-edge-1")).tags).toEqual({ site: "s1" });

    await bar.getByRole("button", { name: "Set tags" }).click();
    await plan.getByLabel("Staged").check();
    await plan.getByLabel("Batch size").fill("1");
    await plan.getByRole("button", { name: "Apply and deliver" }).click();
    await page.getByText("Setting tags team=edge: 2 of 2 done (2 changed).").waitFor();
    expect((await collector("ui-edge-1")).tags).toEqual({ site: "s1", team: "edge" });
    const rollout = await latestRollout();
    expect(rollout).toMatchObject({ kind: "attributes", actor: "user:admin", changed: 2, strategy: { batchSize: 1 } });
    // The collectors never connected, so the second batch waits: abort it, leaving it where it was.
    await call(`/rollouts/${rollout!.id}/abort`, "POST");
  },
  SLOW,
);

test(
  "a settings edit that changes the config is confirmed on the collector's page; one that changes none is saved at once",
  async () => {
    const { page } = browser;
    await page.goto(`${server.base}/ui/collectors/${ids["ui-edge-2"]}`);
    const form = page.getByRole("form", { name: "Collector settings" });
    await form.getByLabel("Environment").fill("prod");
    await form.getByRole("button", { name: "Save" }).click();
    const plan = page.getByRole("form", { name: "Settings change plan" });
    await plan.getByText("This edit changes the config of 1 collector").waitFor();
    expect(await plan.getByRole("region", { name: /^Diff of change/ }).textContent()).toContain("/var/log/prod/*.log");
    expect((await collector("ui-edge-2")).environment).toBeNull();
    await plan.getByRole("button", { name: "Apply and deliver" }).click();
    await page.getByText("Saved.").waitFor();
    expect((await collector("ui-edge-2")).environment).toBe("prod");
    expect(await latestRollout()).toMatchObject({ kind: "attributes", actor: "user:admin", changed: 1, scope: ids["ui-edge-2"] });

    // A name change reads nowhere: saved without a plan.
    await form.getByLabel("Name").fill("ui-edge-2b");
    await form.getByRole("button", { name: "Save" }).click();
    await page.getByRole("heading", { name: "ui-edge-2b", level: 1 }).waitFor();
    expect(await plan.count()).toBe(0);
  },
  SLOW,
);

test(
  "a fleet publish from the Changes page skips a collector whose config cannot be rendered, and the progress names it with the reason",
  async () => {
    const { page } = browser;
    const source = await call<{ id: string }>("/sources", "POST", { name: "gw logs", type: "filelog", config: { include: ["/var/log/gw/*.log"] } });
    const destination = await call<{ id: string }>("/destinations", "POST", {
      name: "per-gateway",
      type: "otlphttp",
      config: { endpoint: '{{attr "gateway"}}' },
    });
    await matchedPipeline(call, "gateways", source.id, destination.id, ["gw=yes"]);
    ids["gw-bad"] = (await call<{ id: string }>("/collectors", "POST", { name: "gw-bad", tags: { gw: "yes" } })).id;
    await call("/collectors", "POST", { name: "gw-good", tags: { gw: "yes", gateway: "https://gw-1.example.com" } });
    await call("/commit", "POST", { message: "Gateway per collector" });
    await page.goto(`${server.base}/ui/changes`);
    await page.getByRole("button", { name: "Review and publish" }).click();
    const plan = page.getByRole("form", { name: "Publish plan" });
    await plan.getByText("Collectors that cannot be rendered are skipped: they keep the config they run, and the rollout and their pages say why.").waitFor();
    await plan.getByRole("button", { name: "Confirm and publish" }).click();
    const skipped = page.getByRole("region", { name: "Skipped" });
    await skipped.getByRole("row").filter({ hasText: "gw-bad" }).getByText("has no attribute 'gateway'", { exact: false }).waitFor();
    await browser.screenshot("attribute-skipped-1280");
    await page.goto(`${server.base}/ui/collectors/${ids["gw-bad"]}`);
    await page.getByRole("note").getByText("Skipped: the config cannot be rendered").waitFor();
  },
  SLOW,
);

test("no console or page errors", () => {
  browser.assertClean();
});
