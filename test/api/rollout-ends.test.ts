/**
 * Every rollout ends and says so (issue 34 part 1), over a real server, real
 * OpAMP WebSocket agents and a webhook receiver on loopback: an all-at-once
 * fleet publish, an attribute change and a one-collector rollback each send
 * `rollout.completed` once every collector applied or failed its config or is
 * offline, and `rollout.failed` too when one failed, with the counts; the end
 * is kept on the rollout (GET /rollouts) and audited; the dashboard's latest
 * rollout stays the fleet publish, and what needs attention names the failed
 * and the offline collector.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { RemoteConfigStatuses } from "../../server/gen/opamp/v1/opamp_pb.ts";
import type { Dashboard } from "../../shared/dashboard.ts";
import type { Rollout, RolloutSummary } from "../../shared/rollouts.ts";
import { matchedPipeline } from "../deployment.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { applied, description, RawAgent, until } from "../opamp/helpers.ts";
import { webhookReceiver } from "../webhooks/receiver.ts";

let server: TestServer;
const agents: RawAgent[] = [];
const rx = webhookReceiver();

beforeAll(async () => {
  server = await startTestServer({ SVC_WEBHOOKS_ALLOWPRIVATETARGETS: "true" });
});
afterAll(async () => {
  for (const agent of agents) agent.close();
  rx.stop();
  await server.stop();
});

const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);

interface Heard {
  event: string;
  data: { rolloutId: string; kind: string; outcome: string; counts: Record<string, number> };
}
const heard = (rolloutId: string) => rx.got.map((d) => JSON.parse(d.body) as Heard).filter((h) => h.data.rolloutId === rolloutId);

/** An OpAMP agent for the collector, connected and described; it answers every config with `answer` (the error when failing). */
async function agentFor(id: string, name: string, answer: () => string | null) {
  const { token } = await server.app.collectorTokens.mint({ actor: "test", remoteAddr: null }, id);
  const agent = await RawAgent.connect(`${server.base.replace(/^http/, "ws")}/v1/opamp`, token);
  agents.push(agent);
  await agent.call({ agentDescription: description({ "service.name": name }) });
  return {
    agent,
    /** Waits for the next config and answers it. */
    async take() {
      const offered = (await agent.next((m) => m.remoteConfig !== undefined)).remoteConfig!;
      const error = answer();
      await agent.call({
        remoteConfigStatus: error === null ? applied(offered.configHash) : applied(offered.configHash, RemoteConfigStatuses.RemoteConfigStatuses_FAILED, error),
      });
    },
  };
}

test("an all-at-once publish, an attribute change and a rollback each end with rollout.completed, and rollout.failed when a collector failed", async () => {
  await call("/webhooks", "POST", { url: rx.url, events: ["rollout.completed", "rollout.failed"], secret: "rollout-ends-secret" });
  const destination = await call<{ id: string }>("/destinations", "POST", {
    name: "gateway",
    type: "otlphttp",
    config: { endpoint: "https://otlp.example.com" },
  });
  const source = await call<{ id: string }>("/sources", "POST", { name: "app", type: "filelog", config: { include: ["/var/log/one/*.log"] } });
  await matchedPipeline(call, "fleet", source.id, destination.id, ["fleet=yes"]);
  await call("/commit", "POST", { message: "one" });
  const ids: Record<string, string> = {};
  for (const name of ["good", "failing", "away"]) ids[name] = (await call<{ id: string }>("/collectors", "POST", { name, tags: { fleet: "yes" } })).id;
  let failNow = false;
  const good = await agentFor(ids.good!, "good", () => null);
  const failing = await agentFor(ids.failing!, "failing", () => (failNow ? "receiver filelog: permission denied" : null));
  const away = await agentFor(ids.away!, "away", () => null);

  // First publish: all three apply.
  const firstTakes = [good.take(), failing.take(), away.take()];
  const first = await call<Rollout>("/publish", "POST");
  await Promise.all(firstTakes);
  await until(async () => heard(first.id).length >= 1);
  expect(heard(first.id).map((h) => [h.event, h.data.outcome, h.data.counts.current])).toEqual([["rollout.completed", "completed", 3]]);

  // One goes offline; the second publish fails on another.
  away.agent.send({ agentDisconnect: {} });
  await until(async () => (await server.app.collectors.get(ids.away!)).status === "offline");
  await call(`/sources/${source.id}`, "PUT", { name: "app", type: "filelog", config: { include: ["/var/log/two/*.log"] } });
  await call("/commit", "POST", { message: "two" });
  failNow = true;
  const secondTakes = [good.take(), failing.take()];
  const second = await call<Rollout>("/publish", "POST");
  expect(second.scope).toBe("fleet");
  await Promise.all(secondTakes);
  await until(async () => heard(second.id).length >= 2);
  const ended = heard(second.id);
  expect(ended.map((h) => h.event).sort()).toEqual(["rollout.completed", "rollout.failed"]);
  for (const h of ended) {
    expect(h.data).toMatchObject({ kind: "publish", outcome: "completed_with_errors" });
    expect(h.data.counts).toMatchObject({ current: 1, failed: 1, offline: 1, applying: 0, outdated: 0 });
  }

  // An attribute change: good leaves the pipeline's matcher, so its config changes; it applies the new one.
  const attributesTake = good.take();
  await call(`/collectors/${ids.good}`, "PATCH", { tags: { fleet: "no" } });
  await attributesTake;
  const attributes = await until(async () =>
    (await call<{ items: RolloutSummary[] }>("/rollouts?limit=1")).items.find((r) => r.kind === "attributes" && r.ended),
  );
  await until(async () => heard(attributes.id).length >= 1);
  expect(heard(attributes.id).map((h) => [h.event, h.data.kind, h.data.outcome])).toEqual([["rollout.completed", "attributes", "completed"]]);

  // A one-collector rollback: it ends too, and is not the dashboard's latest rollout.
  const rollbackTake = good.take();
  await call(`/collectors/${ids.good}/rollback`, "POST");
  await rollbackTake;
  const rollback = await until(async () => (await call<{ items: RolloutSummary[] }>("/rollouts?limit=1")).items.find((r) => r.kind === "rollback" && r.ended));
  await until(async () => heard(rollback.id).length >= 1);
  expect(heard(rollback.id).map((h) => [h.event, h.data.outcome])).toEqual([["rollout.completed", "completed"]]);

  // Each ended once: kept on the rollout and audited.
  const { items } = await call<{ items: RolloutSummary[] }>("/rollouts");
  expect(items.map((r) => [r.id, r.kind, r.ended?.outcome])).toEqual([
    [rollback.id, "rollback", "completed"],
    [attributes.id, "attributes", "completed"],
    [second.id, "publish", "completed_with_errors"],
    [first.id, "publish", "completed"],
  ]);
  const audit = await call<{ items: { action: string; resourceId: string }[] }>("/audit?limit=200");
  expect(
    audit.items
      .filter((e) => e.action === "rollout.end")
      .map((e) => e.resourceId)
      .sort(),
  ).toEqual([first.id, second.id, attributes.id, rollback.id].sort());

  // The dashboard: the fleet publish that failed is the latest rollout; the failed and the offline collector need attention.
  const d = await call<Dashboard>("/dashboard");
  expect(d.rollout).toMatchObject({ rolloutId: second.id, state: "completed_with_errors" });
  expect(d.rollout.failures.map((f) => f.name)).toEqual(["failing"]);
  expect(d.failed).toEqual({ count: 1, sample: [{ id: ids.failing!, name: "failing", error: "receiver filelog: permission denied" }] });
  expect(d.offline).toEqual({ count: 1, sample: [{ id: ids.away!, name: "away" }] });
  expect(d.pinned.sample.map((p) => p.name)).toEqual(["good"]);
  expect((await call<{ rolloutId: string }>("/publish/status?scope=fleet")).rolloutId).toBe(second.id);
  expect((await call<{ rolloutId: string }>("/publish/status")).rolloutId).toBe(rollback.id);
  // Nothing was sent twice.
  const keys = rx.got.map((d) => JSON.parse(d.body) as Heard).map((h) => `${h.data.rolloutId} ${h.event}`);
  expect(new Set(keys).size).toBe(keys.length);
}, 120_000);
