/**
 * The Changes page in Debian's chromium against the real server: edits made
 * through the API show as pending files with their diffs; a blank commit
 * message is refused inline; a commit from the UI lands in the history;
 * "Review and publish" shows the plan (each change with its collectors and
 * diff, errors and pinned collectors), holds the publish back while a
 * collector cannot be rendered until the operator chooses to skip it, and
 * confirming reaches a connected OpAMP test client, whose APPLIED report
 * turns up live as "current" in the rollout progress, and a second client's
 * refusal as a failure named by collector with its message; a viewer sees
 * the page without its write buttons. Desktop and phone screenshots, no
 * console errors.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { deploymentKit } from "../deployment.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { RemoteConfigStatuses } from "../../server/gen/opamp/v1/opamp_pb.ts";
import type { PublishPlan } from "../../shared/rollouts.ts";
import { applied, description, RawAgent } from "../opamp/helpers.ts";
import { openBrowser, type BrowserSession, signIn } from "./browser.ts";

let server: TestServer;
let browser: BrowserSession;
let agent: RawAgent;
/** A second client that refuses every config it is sent. */
let refuser: RawAgent;
let collectorId: string;
let refuserId: string;
const SLOW = 30_000;

beforeAll(async () => {
  server = await startTestServer({ SVC_EXTERNALURL: "https://svc.example.com" });
  browser = await openBrowser({ width: 1280, height: 800 });
  const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);
  const connect = async (name: string) => {
    const { id } = await call<{ id: string }>("/collectors", "POST", { name });
    const { token } = await call<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp", collectorId: id });
    const client = await RawAgent.connect(`${server.base.replace(/^http/, "ws")}/v1/opamp`, token);
    await client.call({ agentDescription: description({ "service.name": name }) });
    return { id, client };
  };
  ({ id: collectorId, client: agent } = await connect("edge-1"));
  ({ id: refuserId, client: refuser } = await connect("edge-2"));
  const routeThrough = await deploymentKit(call);
  await routeThrough(collectorId, "/var/log/edge/*.log");
  await routeThrough(refuserId, "/var/log/refused/*.log");

  const admin = await server.uiAdmin();
  const { page } = browser;
  await signIn(page, server.base, admin, "/ui/changes");
}, SLOW);

afterAll(async () => {
  agent?.close();
  refuser?.close();
  await browser?.close();
  await server?.stop();
});

test(
  "pending edits are listed with their diffs",
  async () => {
    const { page } = browser;
    await page.getByText("7 changed files.").waitFor();
    const files = page.getByRole("list", { name: "Changed files" }).getByRole("listitem");
    expect(await files.count()).toBe(7);
    const activations = files.filter({ hasText: `collectors/${collectorId}/activations.yaml` });
    expect(await activations.textContent()).toContain("added");
    // Over five files the diffs start folded; the file's summary opens its diff.
    await activations.getByText(`collectors/${collectorId}/activations.yaml`, { exact: true }).click();
    const diff = page.getByRole("region", { name: `Diff of collectors/${collectorId}/activations.yaml` });
    expect(await diff.textContent()).toContain("/var/log/edge/*.log");
    // Every line of an added file is an addition, counted in the header.
    expect(await activations.getByText(/^\+\d+$/).textContent()).not.toBe("+0");

    await activations.getByLabel("Side by side").check();
    // An added file faces nothing: an empty left half beside the new lines.
    const firstLine = diff.locator("tr").nth(1).locator("td");
    expect(await firstLine.count()).toBe(3);
    expect(await firstLine.first().textContent()).toBe("");
    expect(await firstLine.last().textContent()).toMatch(/^\+\S/);
    await browser.screenshot("changes-pending-1280");
  },
  SLOW,
);

test(
  "a blank commit message is refused inline, then a commit lands in the history",
  async () => {
    const { page } = browser;
    const form = page.getByRole("form", { name: "Commit pending changes" });
    await form.getByLabel("Commit message").fill("   ");
    await form.getByRole("button", { name: "Commit" }).click();
    await form
      .getByRole("alert")
      .getByText(/HTTP 400/)
      .waitFor();
    expect(await form.getByRole("alert").textContent()).toContain("non-blank commit message");

    await form.getByLabel("Commit message").fill("Onboard edge-1");
    await form.getByRole("button", { name: "Commit" }).click();
    await page.getByText("No pending changes.").waitFor();
    const history = page.getByRole("region", { name: "Commits, newest first" });
    const row = history.getByRole("row").filter({ hasText: "Onboard edge-1" });
    await row.waitFor();
    expect(await row.textContent()).toContain("admin");
    expect(await history.locator("tbody tr").count()).toBe(1);
  },
  SLOW,
);

test(
  "the plan shows each change, and that a collector that cannot be rendered is skipped by the publish",
  async () => {
    const { page } = browser;
    // The real plan, with one collector that cannot be rendered and one pinned added: the UI says the publish skips it (issue 33 part 4).
    await page.route(
      "**/api/v1/publish/plan",
      async (route) => {
        const plan = (await (await route.fetch()).json()) as PublishPlan;
        plan.errors.push({
          collectorId: "0190c3c0-0000-7000-8000-00000000e903",
          name: "edge-3",
          path: "routes[r1].sourceId",
          message: "source 'app' is not active on collector",
        });
        plan.pinned.push({ collectorId: "0190c3c0-0000-7000-8000-00000000e904", name: "edge-4", since: new Date().toISOString(), by: "user:admin" });
        await route.fulfill({ json: plan });
      },
      { times: 1 },
    );
    await page.getByRole("button", { name: "Review and publish" }).click();
    const plan = page.getByRole("form", { name: "Publish plan" });
    await plan.getByText("2 collectors change in 2 ways, 0 unchanged, 1 pinned and skipped, 1 cannot be rendered.").waitFor();
    const groups = plan.getByRole("list", { name: "Changes" }).getByRole("listitem");
    expect(await groups.count()).toBe(2);
    // Each collector has its own include path, so each is a change of its own, named and linked, with its diff.
    for (const [name, id, path] of [
      ["edge-1", collectorId, "/var/log/edge/*.log"],
      ["edge-2", refuserId, "/var/log/refused/*.log"],
    ] as const) {
      const group = groups.filter({ has: page.getByRole("link", { name, exact: true }) });
      expect(await group.getByRole("heading").textContent()).toMatch(/: 1 collector$/);
      expect(await group.getByRole("link", { name, exact: true }).getAttribute("href")).toBe(`/ui/collectors/${id}`);
      expect(await group.getByRole("region", { name: /^Diff of change/ }).textContent()).toContain(path);
    }
    const errors = plan.getByRole("region", { name: "Cannot be rendered" });
    expect(await errors.textContent()).toContain("edge-3: source 'app' is not active on collector");
    expect(await plan.getByRole("region", { name: "Pinned, skipped" }).textContent()).toContain("edge-4 pinned by user:admin");
    expect(await plan.getByLabel("All at once").isChecked()).toBe(true);
    await plan.getByText("Collectors that cannot be rendered are skipped: they keep the config they run, and the rollout and their pages say why.").waitFor();
    const confirm = plan.getByRole("button", { name: "Confirm and publish" });
    expect(await confirm.isDisabled()).toBe(false);
    await browser.screenshot("changes-plan-1280");

    const pushed = agent.next((m) => m.remoteConfig !== undefined, 10_000);
    const refused = refuser.next((m) => m.remoteConfig !== undefined, 10_000);
    const request = page.waitForRequest((r) => r.url().endsWith("/api/v1/publish") && r.method() === "POST");
    await confirm.click();
    // All at once: no strategy, and no skip to ask for: a fleet publish skips what cannot be rendered.
    expect((await request).postDataJSON()).toEqual({});
    await page
      .getByRole("status")
      .getByText(/to 2 collectors; 2 get a new config\.$/)
      .waitFor();
    expect(await plan.count()).toBe(0);

    const message = await pushed;
    expect(new TextDecoder().decode(message.remoteConfig!.config!.configMap[""]!.body)).toContain("/var/log/edge/*.log");
    const bad = await refused;
    await refuser.call({
      remoteConfigStatus: applied(bad.remoteConfig!.configHash, RemoteConfigStatuses.RemoteConfigStatuses_FAILED, "receiver filelog: permission denied"),
    });

    const progress = page.getByRole("region", { name: "Rollout progress" });
    const count = (state: string) => progress.locator("div", { has: page.getByRole("term").getByText(state, { exact: true }) }).getByRole("definition");
    await agent.call({ remoteConfigStatus: applied(message.remoteConfig!.configHash) });
    // Live: the config_target event refreshes the progress without a reload.
    await progress.getByText("Completed with errors", { exact: true }).waitFor();
    expect(await count("current").textContent()).toBe("1");
    expect(await count("failed").textContent()).toBe("1");
    // Not staged: no batches, no queued count, nothing to pause.
    expect(await progress.getByRole("list", { name: "Batches" }).count()).toBe(0);
    expect(await count("queued").count()).toBe(0);
    expect(await progress.getByRole("button").count()).toBe(0);
    // The failure is named (its id beside the name) with the collector's message.
    const failure = progress.getByRole("region", { name: "Failures" }).getByRole("row", { name: /edge-2/ });
    await failure.waitFor();
    expect(await failure.getByRole("rowheader").textContent()).toBe(`edge-2${refuserId}`);
    expect(await failure.getByRole("cell").textContent()).toBe("receiver filelog: permission denied");
    await browser.screenshot("changes-1280");
  },
  SLOW,
);

test(
  "a plan with nothing to change offers no publish",
  async () => {
    const { page } = browser;
    await page.getByRole("button", { name: "Review and publish" }).click();
    const plan = page.getByRole("form", { name: "Publish plan" });
    await plan.getByText("No collector changes, 2 unchanged.").waitFor();
    expect(await plan.getByRole("button", { name: "Confirm and publish" }).count()).toBe(0);
    await plan.getByRole("button", { name: "Cancel" }).click();
    await page.getByRole("button", { name: "Review and publish" }).waitFor();
  },
  SLOW,
);

test(
  "publishing to one unknown collector shows the API's error",
  async () => {
    const { page } = browser;
    const form = page.getByRole("form", { name: "Publish to one collector" });
    await form.getByLabel("Collector", { exact: true }).fill("no-such-collector");
    await form.getByRole("button", { name: "Publish to collector" }).click();
    await page
      .getByRole("alert")
      .getByText(/HTTP 404/)
      .waitFor();
  },
  SLOW,
);

test(
  "the page fits a 390 px phone",
  async () => {
    const { page } = browser;
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await page.getByRole("region", { name: "Rollout progress" }).getByText("Completed with errors", { exact: true }).waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    expect(overflow).toBe(0);
    await browser.screenshot("changes-390");
    await page.setViewportSize({ width: 1280, height: 800 });
  },
  SLOW,
);

test("no console or page errors during the admin's run", () => {
  browser.assertClean();
});

test(
  "a viewer sees the history and progress without write buttons",
  async () => {
    const invited = await server.call<{ inviteUrl: string }>("/users", "POST", { username: "vera", email: "vera@example.com", role: "viewer" });
    const token = new URL(invited.inviteUrl).searchParams.get("token")!;
    const viewer = await openBrowser({ width: 1280, height: 800 });
    try {
      // The request context shares the browser's cookies: redeeming the invite signs the viewer in.
      const res = await viewer.context.request.post(`${server.base}/api/v1/session/invite`, { data: { token, password: "viewer-password-123" } });
      expect(res.status()).toBe(200);
      await viewer.page.goto(`${server.base}/ui/changes`);
      await viewer.page.getByRole("row").filter({ hasText: "Onboard edge-1" }).waitFor();
      await viewer.page.getByRole("region", { name: "Rollout progress" }).getByText("Completed with errors", { exact: true }).waitFor();
      for (const name of ["Review and publish", "Publish to collector", "Commit", "Discard all changes", "Pause", "Resume", "Abort"]) {
        expect(await viewer.page.getByRole("button", { name, exact: true }).count()).toBe(0);
      }
      viewer.assertClean();
    } finally {
      await viewer.close();
    }
  },
  SLOW,
);
