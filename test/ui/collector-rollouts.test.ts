/**
 * Issue 23 parts 3–5 on the collector page, in Debian's chromium against the
 * real server, one collector on a real OpAMP WebSocket session: it applies
 * v1 and fails v2; a rollback from the page pins it (the confirmation says
 * so), the badge names who and when, history says what became of each
 * config, and Unpin lifts it. Then the supervisor's own rollback (APPLIED A →
 * APPLYING B → FAILED B → APPLIED A) reads "went back", and "Retry this
 * config" offers B again (the agent receives it). Last, an effective config
 * with another endpoint shows Drifted with the diff, and the collector is in
 * the list's drifted view. A viewer sees the badge without the buttons.
 * Desktop and 390 px screenshots, no console errors.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { create } from "@bufbuild/protobuf";
import { parse, stringify } from "yaml";
import { AgentConfigMapSchema, AgentConfigObjectSchema, EffectiveConfigSchema, RemoteConfigStatuses } from "../../server/gen/opamp/v1/opamp_pb.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { applied, description, RawAgent, until } from "../opamp/helpers.ts";
import { openBrowser, phone, signIn, type BrowserSession } from "./browser.ts";
import { matchedPipeline } from "../deployment.ts";

const SLOW = 30_000;
let server: TestServer;
let browser: BrowserSession;
let agent: RawAgent;
let opampUrl: string;
let token: string;
let collectorId: string;
/** Changes the fleet pipeline's source path to /var/log/<version>/ and commits it. */
let release: (version: string) => Promise<void>;
/** The hash and body of the config the agent received last. */
let last: { hash: Uint8Array; body: string };
const dialogs: string[] = [];

const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);
const hex = (hash: Uint8Array) => Buffer.from(hash).toString("hex");

/** Waits for the next config pushed to the agent while `action` runs. */
async function offered(action: () => Promise<unknown>): Promise<{ hash: Uint8Array; body: string }> {
  const next = agent.next((m) => m.remoteConfig !== undefined, 10_000);
  await action();
  const remote = (await next).remoteConfig!;
  last = { hash: remote.configHash, body: new TextDecoder().decode(remote.config!.configMap[""]!.body) };
  return last;
}

interface Target {
  state: string;
  pinned?: { actor: string };
  collectorRollback?: { toSeq: number | null };
  drift?: { drifted: boolean };
}
const target = async () => (await call<{ target: Target }>(`/collectors/${collectorId}/effective-config`)).target;

beforeAll(async () => {
  server = await startTestServer({ SVC_EXTERNALURL: "https://svc.example.com" });
  browser = await openBrowser({ width: 1280, height: 800 });
  browser.page.on("dialog", (dialog) => {
    dialogs.push(dialog.message());
    void dialog.accept();
  });
  const source = await call<{ id: string }>("/sources", "POST", { name: "app", type: "filelog", config: { include: ["/var/log/v1/*.log"] } });
  const destination = await call<{ id: string }>("/destinations", "POST", {
    name: "backend",
    type: "otlphttp",
    config: { endpoint: "https://otlp.example.com" },
  });
  await matchedPipeline(call, "fleet", source.id, destination.id, ["fleet=yes"]);
  release = async (version) => {
    await call(`/sources/${source.id}`, "PUT", { name: "app", type: "filelog", config: { include: [`/var/log/${version}/*.log`] } });
    await call("/commit", "POST", { message: version });
  };
  collectorId = (await call<{ id: string }>("/collectors", "POST", { name: "edge-1", tags: { fleet: "yes" } })).id;
  token = (await call<{ token: string }>(`/collectors/${collectorId}/otlp-token`, "POST")).token;
  opampUrl = `${server.base.replace(/^http/, "ws")}/v1/opamp`;
  agent = await RawAgent.connect(opampUrl, token);
  await agent.call({ agentDescription: description({ "service.name": "edge-1" }) });

  // v1 applied, v2 failed.
  await call("/commit", "POST", { message: "v1" });
  const v1 = await offered(() => call("/publish", "POST"));
  await agent.call({ remoteConfigStatus: applied(v1.hash) });
  await until(async () => (await target()).state === "current");
  await release("v2");
  const v2 = await offered(() => call("/publish", "POST"));
  await agent.call({ remoteConfigStatus: applied(v2.hash, RemoteConfigStatuses.RemoteConfigStatuses_FAILED, "open /var/log/v2: permission denied") });
  await until(async () => (await target()).state === "failed");

  await signIn(browser.page, server.base, await server.uiAdmin(), `/ui/collectors/${collectorId}`);
}, SLOW);

afterAll(async () => {
  agent?.close();
  await browser?.close();
  await server?.stop();
});

const history = () => browser.page.getByRole("region", { name: "Config history" });
const configuration = () => browser.page.getByRole("region", { name: "Configuration" });
const row = (seq: number) => history().getByRole("row", { name: new RegExp(`^Version ${seq}\\b`) });
const stateOf = async (seq: number) => (await row(seq).locator(".history-state").textContent())?.trim();

test(
  "a failed config reads failed with the collector's message",
  async () => {
    await row(2).waitFor();
    expect(await stateOf(2)).toBe("failedopen /var/log/v2: permission denied");
    expect(await stateOf(1)).toBe("superseded");
    expect(await configuration().getByRole("group", { name: "Pinned" }).count()).toBe(0);
  },
  SLOW,
);

test(
  "a rollback from the page pins the collector: badge with who and when, history says rolled back; Unpin lifts it",
  async () => {
    const { page } = browser;
    const back = await offered(() => page.getByRole("button", { name: "Roll back to version 1" }).click());
    expect(dialogs.at(-1)).toContain("the collector is pinned to it: fleet publishes skip it until it is unpinned");
    await agent.call({ remoteConfigStatus: applied(back.hash) });
    await page.getByRole("status").getByText("Rolled back to version 1: version 3 is now the target").waitFor();

    const pinned = configuration().getByRole("group", { name: "Pinned" });
    await pinned.waitFor();
    const actor = (await target()).pinned!.actor;
    expect(await pinned.textContent()).toContain(`Pinned by ${actor}, `);
    expect(await pinned.locator("time").count()).toBe(1);
    await until(async () => (await stateOf(3)) === "current");
    expect(await stateOf(2)).toBe("failed, then rolled backopen /var/log/v2: permission denied");
    expect(await row(3).textContent()).toContain("rollback to version 1");
    await browser.screenshot("collector-rollouts-pinned-1280");

    await pinned.getByRole("button", { name: "Unpin" }).click();
    await configuration().getByRole("status").getByText("Unpinned: the next fleet publish reaches this collector.").waitFor();
    await pinned.waitFor({ state: "detached" });
    expect((await target()).pinned).toBeUndefined();
  },
  SLOW,
);

test(
  "the collector's own rollback reads 'went back', and Retry offers the failed config again",
  async () => {
    await release("v3");
    const b = await offered(() => call("/publish", "POST"));
    const a = await until(async () => (await call<{ items: { seq: number; hash: string }[] }>(`/collectors/${collectorId}/config-history`)).items[2]);
    // The supervisor: applying B, B failed, back on A (the config of #3).
    await agent.call({ remoteConfigStatus: applied(b.hash, RemoteConfigStatuses.RemoteConfigStatuses_APPLYING) });
    await agent.call({
      remoteConfigStatus: applied(b.hash, RemoteConfigStatuses.RemoteConfigStatuses_FAILED, "collector exited: open /var/log/v3: no such file"),
    });
    await agent.call({ remoteConfigStatus: applied(Buffer.from(a.hash, "hex")) });

    const note = configuration().getByRole("group", { name: "Rolled back by the collector" });
    await note.waitFor();
    expect(await note.textContent()).toContain("The collector went back to #3 after this config failed");
    await until(async () => (await stateOf(4)) === "rolled back by the collector to #3collector exited: open /var/log/v3: no such file");
    await browser.screenshot("collector-rollouts-went-back-1280");
    await phone(browser, "collector-rollouts-went-back-390");

    // The session stays open, as the supervisor's does: the retry is pushed over it.
    const again = await offered(() => note.getByRole("button", { name: "Retry this config" }).click());
    expect(hex(again.hash)).toBe(hex(b.hash));
    await configuration().getByRole("status").getByText("This config is offered to the collector again.").waitFor();
    await note.waitFor({ state: "detached" });
    // Fixed on the host this time: it applies.
    await agent.call({ remoteConfigStatus: applied(again.hash) });
    await configuration()
      .getByText(/delivery state current/)
      .waitFor();
  },
  SLOW,
);

/** The agent's effective config: what it was sent, with `change` made to it. */
function effective(change: (config: Record<string, Record<string, Record<string, unknown>>>) => void) {
  const config = parse(last.body) as Record<string, Record<string, Record<string, unknown>>>;
  change(config);
  const file = create(AgentConfigObjectSchema, { body: new TextEncoder().encode(stringify(config)), contentType: "text/yaml" });
  return create(EffectiveConfigSchema, { configMap: create(AgentConfigMapSchema, { configMap: { "": file } }) });
}

test(
  "in sync, then drifted with the reason and the diff; the drifted view lists it",
  async () => {
    const { page } = browser;
    await agent.call({ effectiveConfig: effective(() => undefined) });
    const drift = configuration().getByRole("group", { name: "Drift status" });
    await drift.getByText(/^In sync: the collector runs its target\./).waitFor();

    // Someone changed the endpoint on the host.
    await agent.call({
      effectiveConfig: effective((config) => {
        const exporter = Object.keys(config.exporters!).find((name) => name.startsWith("otlphttp"))!;
        config.exporters![exporter]!.endpoint = "https://elsewhere.example.net";
      }),
    });
    await drift.getByText("Drifted").waitFor();
    expect(await drift.textContent()).toMatch(/Drifted: the collector runs something other than its target \(exporters\.otlphttp\/\S+\.endpoint differs/);
    const diff = drift.getByRole("region", { name: "Drift: target against what the collector runs" });
    expect(await diff.locator("tr", { hasText: "https://otlp.example.com" }).textContent()).toContain("−");
    expect(await diff.locator("tr", { hasText: "https://elsewhere.example.net" }).textContent()).toContain("+");
    await browser.screenshot("collector-rollouts-drifted-1280");
    await phone(browser, "collector-rollouts-drifted-390");

    // From the list page, the chip counts it and opens the drifted view.
    await page.getByRole("link", { name: "← All collectors" }).click();
    const chip = page.getByRole("navigation", { name: "Collector views" }).getByRole("link", { name: "Drifted (1)" });
    await chip.waitFor();
    await browser.screenshot("collectors-drifted-chip-1280");
    await chip.click();
    await page.waitForURL((url) => url.search === "?view=drifted");
    await page.getByRole("heading", { level: 1, name: "Drifted collectors" }).waitFor();
    const listed = page.getByRole("region", { name: "Drifted collectors" }).getByRole("row", { name: /edge-1/ });
    expect(await listed.textContent()).toContain("endpoint differs");
    await browser.screenshot("collector-drifted-list-1280");
    await phone(browser, "collector-drifted-list-390");
    await listed.getByRole("link", { name: "edge-1" }).click();
    await page.waitForURL((url) => url.pathname === `/ui/collectors/${collectorId}`);

    // Back on its target: in sync, and the drifted view is empty.
    await agent.call({ effectiveConfig: effective(() => undefined) });
    await configuration()
      .getByRole("group", { name: "Drift status" })
      .getByText(/^In sync/)
      .waitFor();
    await page.goto(`${server.base}/ui/collectors?view=drifted`);
    await page.getByText("No collector runs anything other than its target.").waitFor();
  },
  SLOW,
);

test("no console or page errors", () => {
  browser.assertClean();
});

test(
  "a viewer sees the pinned badge without Unpin, Retry or Roll back",
  async () => {
    await call(`/collectors/${collectorId}/rollback`, "POST");
    const invited = await call<{ inviteUrl: string }>("/users", "POST", { username: "vic", email: "vic@example.com", role: "viewer" });
    const invite = new URL(invited.inviteUrl).searchParams.get("token")!;
    const viewer = await openBrowser({ width: 1280, height: 800 });
    try {
      expect(
        (await viewer.context.request.post(`${server.base}/api/v1/session/invite`, { data: { token: invite, password: "viewer-password-123" } })).status(),
      ).toBe(200);
      await viewer.page.goto(`${server.base}/ui/collectors/${collectorId}`);
      const section = viewer.page.getByRole("region", { name: "Configuration" });
      await section.getByRole("group", { name: "Pinned" }).getByText("Pinned by sa:admin").waitFor();
      expect(await viewer.page.getByRole("button", { name: /^(Unpin|Retry|Roll back)/ }).count()).toBe(0);
      viewer.assertClean();
    } finally {
      await viewer.close();
    }
  },
  SLOW,
);
