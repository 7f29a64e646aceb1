/**
 * Staged rollouts (issue 23 part 2) with 200 real OpAMP WebSocket agents:
 * 5 % of them fail the new config; a rollout in batches of 20 with a 2 %
 * failure threshold pauses itself after the first batch and releases nothing
 * more; resume accepts those failures and releases the next batch (which
 * pauses it again); a publish is refused meanwhile; abort with rollbackFailed
 * rolls the failed collectors back and leaves the unreleased ones alone.
 * 200 agents make every batch rule show (ten batches, one failure in each);
 * the fleet's scale is bench/opamp.ts's and bench/fleet.ts's to measure, so a
 * busy machine only makes this slower, well inside its deadlines.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { RemoteConfigStatuses } from "../../server/gen/opamp/v1/opamp_pb.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { seedOpampFleet } from "../faults/storm.ts";
import { applied, description, RawAgent, until } from "../opamp/helpers.ts";
import type { Rollout, RolloutStatus } from "../../shared/rollouts.ts";
import { matchedPipeline } from "../deployment.ts";

const FLEET = 200;
const BATCH = FLEET / 10;
/** Every 20th agent fails a config that reads the new path: 5 % of each batch. */
const fails = (index: number) => index % 20 === 0;

let server: TestServer;
const agents: RawAgent[] = [];
beforeAll(async () => {
  server = await startTestServer({ SVC_WEBHOOKS_ALLOWPRIVATETARGETS: "true" }); // the receiver is on loopback
});
afterAll(async () => {
  for (const agent of agents) agent.close();
  await server.stop();
});

const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);

test("a staged rollout pauses on failures, resumes, refuses a publish meanwhile, and aborts with rollbacks", async () => {
  const seeded = await seedOpampFleet(server.app.store, FLEET, "staged");
  const ids = (await server.app.collectors.all()).map((c) => c.id);
  expect(ids).toHaveLength(FLEET);
  /** What each agent runs now: the hash it last applied. */
  const running = new Map<number, string>();
  const url = `${server.base.replace(/^http/, "ws")}/v1/opamp`;
  for (const [index, { token, uid }] of seeded.entries()) {
    const agent = await RawAgent.connect(url, token, Buffer.from(uid, "hex"));
    agent.ws.addEventListener("message", () => {
      const message = agent.received[agent.received.length - 1]!;
      const config = message.remoteConfig;
      if (!config) return;
      const body = new TextDecoder().decode(config.config!.configMap[""]!.body);
      const hash = Buffer.from(config.configHash).toString("hex");
      if (fails(index) && body.includes("/var/log/two/")) {
        agent.send({ remoteConfigStatus: applied(config.configHash, RemoteConfigStatuses.RemoteConfigStatuses_FAILED, "cannot open /var/log/two") });
      } else {
        running.set(index, hash);
        agent.send({ remoteConfigStatus: applied(config.configHash) });
      }
    });
    agent.send({ agentDescription: description({ "service.name": `staged-${index}` }) });
    agents.push(agent);
  }

  const source = await call<{ id: string }>("/sources", "POST", { name: "app", type: "filelog", config: { include: ["/var/log/one/*.log"] } });
  const destination = await call<{ id: string }>("/destinations", "POST", {
    name: "backend",
    type: "otlphttp",
    config: { endpoint: "https://otlp.example.com" },
  });
  await matchedPipeline(call, "fleet", source.id, destination.id, ["collector.mode=opamp"]);
  await call("/commit", "POST", { message: "one" });
  // A webhook hears the staged rollout's phases (server/webhooks/events.ts).
  const heard: string[] = [];
  const receiver = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: async (req) => {
      const { event, data } = (await req.json()) as { event: string; data: { rolloutId: string } };
      heard.push(`${data.rolloutId} ${event}`);
      return new Response("");
    },
  });
  await call("/webhooks", "POST", {
    url: `http://127.0.0.1:${receiver.port}/`,
    events: ["rollout.paused", "rollout.failed", "rollout.completed"],
    secret: "staged-rollout-secret",
  });
  // All at once, as before: every agent applies it.
  const first = await call<Rollout>("/publish", "POST");
  expect(first.strategy).toBeUndefined();
  await until(
    async () => (await call<RolloutStatus>("/publish/status")).counts.current === FLEET,
    60_000,
    100,
    `all ${FLEET} agents current on the first publish`,
  );
  const before = new Map(running);

  await call(`/sources/${source.id}`, "PUT", { name: "app", type: "filelog", config: { include: ["/var/log/two/*.log"] } });
  await call("/commit", "POST", { message: "two" });
  const bad = await server.api("/publish", { method: "POST", json: { strategy: { batchSize: 10, batchPercent: 5 } } });
  expect(bad.status).toBe(400);

  const rollout = await call<Rollout>("/publish", "POST", { strategy: { batchSize: BATCH, failureThreshold: 2 } });
  expect(rollout.batchEnds).toHaveLength(10);
  expect(rollout.strategy).toEqual({ batchSize: BATCH, pauseSeconds: 0, failureThreshold: 2 });
  const progress = () => call<RolloutStatus>(`/rollouts/${rollout.id}`);
  const paused = await until(
    async () => {
      const status = await progress();
      return status.state === "paused" ? status : null;
    },
    60_000,
    100,
    "the rollout paused after batch 1",
  );
  const failedName = (await call<{ name: string }>(`/collectors/${paused.collectors.find((c) => c.state === "failed")!.id}`)).name;
  expect(paused.pausedReason).toBe(`1 of ${BATCH} collectors in batch 1 failed (5 %, threshold 2 %); first: ${failedName}: cannot open /var/log/two`);
  expect(paused.counts).toMatchObject({ current: BATCH - 1, failed: 1, queued: FLEET - BATCH });
  expect(paused.batches!.map((b) => b.released)).toEqual([true, ...Array(9).fill(false)]);
  expect(paused.eta).toBeNull();
  // Nothing past the first batch was sent anything.
  for (let index = BATCH; index < FLEET; index++) expect(running.get(index)).toBe(before.get(index));
  const failed = paused.collectors.filter((c) => c.state === "failed");
  expect(failed.every((c) => c.error === "cannot open /var/log/two")).toBe(true);

  const refused = await server.api("/publish", { method: "POST" });
  expect(refused.status).toBe(409);
  expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("rollout_in_progress");
  expect((await server.api(`/rollouts/${rollout.id}/resume`, { method: "POST" })).status).toBe(200);
  const second = await until(
    async () => {
      const status = await progress();
      return status.state === "paused" && status.batches![1]!.released ? status : null;
    },
    60_000,
    100,
    "the rollout paused again after batch 2",
  );
  expect(second.pausedReason).toContain("in batch 2 failed");
  expect(second.counts).toMatchObject({ current: 2 * BATCH - 2, failed: 2, queued: FLEET - 2 * BATCH });
  // Pausing what is paused is a conflict, not a silent success.
  expect((await server.api(`/rollouts/${rollout.id}/pause`, { method: "POST" })).status).toBe(409);

  const aborted = await call<{ rollout: Rollout; rolledBack: string[] }>(`/rollouts/${rollout.id}/abort`, "POST", { rollbackFailed: true });
  expect(aborted.rollout.phase).toBe("aborted");
  expect(aborted.rolledBack.sort()).toEqual(
    second.collectors
      .filter((c) => c.state === "failed")
      .map((c) => c.id)
      .sort(),
  );
  expect(aborted.rolledBack).toHaveLength(2);
  // The failed agents are sent their previous config again and run it.
  await until(
    async () => [...Array(2 * BATCH).keys()].filter(fails).every((index) => running.get(index) === before.get(index) && agents[index]!.received.length > 2),
    30_000,
    100,
    "the failed agents back on their previous config",
  );
  const after = await progress();
  expect(after.state).toBe("aborted");
  // The rollbacks are steps of the aborted rollout: it stays the latest one.
  expect((await call<RolloutStatus>("/publish/status")).rolloutId).toBe(rollout.id);
  expect(after.counts.queued).toBe(FLEET - 2 * BATCH);
  for (let index = 2 * BATCH; index < FLEET; index++) expect(running.get(index)).toBe(before.get(index));
  expect((await server.api(`/rollouts/${rollout.id}/resume`, { method: "POST" })).status).toBe(409);

  // The rollouts are listed newest first; each step is audited.
  const { items } = await call<{ items: { id: string; changed: number; phase?: string }[] }>("/rollouts");
  expect(items.map((r) => r.id)).toEqual(
    items
      .map((r) => r.id)
      .sort()
      .reverse(),
  );
  expect(items.find((r) => r.id === rollout.id)).toMatchObject({ changed: FLEET, phase: "aborted" });
  const audit = await call<{ items: { action: string }[] }>(`/audit?limit=200`);
  const actions = audit.items.map((e) => e.action);
  for (const action of ["rollout.pause", "rollout.resume", "rollout.batch", "rollout.abort", "config.rollback"]) expect(actions).toContain(action);
  // Once aborted, publishing works again.
  expect((await server.api("/publish", { method: "POST" })).status).toBe(202);
  // The all-at-once publish completed; the staged one paused after batch 1 and after batch 2, then ended aborted.
  const of = (id: string) => heard.filter((h) => h.startsWith(`${id} `)).map((h) => h.slice(id.length + 1));
  await until(async () => of(rollout.id).length >= 4 && of(first.id).length >= 1, 10_000, 100, "the rollouts' webhook deliveries");
  expect(of(first.id)).toEqual(["rollout.completed"]);
  // The queue does not promise an order across events.
  expect(of(rollout.id).sort()).toEqual(["rollout.completed", "rollout.failed", "rollout.paused", "rollout.paused"]);
  receiver.stop(true);
}, 180_000);
