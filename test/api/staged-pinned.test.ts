/**
 * A staged rollout's later batch leaves a pinned collector alone (the
 * mutation audit, issue 33 item 7): four real OpAMP agents, two batches of
 * two; the first batch fails the new config, so the rollout pauses; an
 * operator rolls back a collector of the second batch, which pins it; on
 * resume the second batch is released, and the pinned collector keeps the
 * config it was rolled back to and is sent nothing new, while its batch-mate
 * gets the new one.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { RemoteConfigStatuses } from "../../server/gen/opamp/v1/opamp_pb.ts";
import { seedOpampFleet } from "../faults/storm.ts";
import { matchedPipeline } from "../deployment.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { applied, description, RawAgent, until } from "../opamp/helpers.ts";
import type { Rollout, RolloutStatus } from "../../shared/rollouts.ts";

let server: TestServer;
const agents: RawAgent[] = [];
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  for (const agent of agents) agent.close();
  await server.stop();
});

const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);

test("a released batch does not move a collector pinned by a rollback since the publish", async () => {
  const seeded = await seedOpampFleet(server.app.store, 4, "pinned");
  const ids = (await server.app.collectors.all()).map((c) => c.id);
  /** Per collector id: the bodies it was sent. */
  const sent = new Map<string, string[]>(ids.map((id) => [id, []]));
  const url = `${server.base.replace(/^http/, "ws")}/v1/opamp`;
  for (const [index, { token, uid }] of seeded.entries()) {
    const agent = await RawAgent.connect(url, token, Buffer.from(uid, "hex"));
    agent.ws.addEventListener("message", () => {
      const config = agent.received[agent.received.length - 1]!.remoteConfig;
      if (!config) return;
      const body = new TextDecoder().decode(config.config!.configMap[""]!.body);
      sent.get(ids[index]!)!.push(body);
      // Every agent fails the third config: the first batch pauses the rollout.
      const failed = body.includes("/var/log/three/");
      agent.send({
        remoteConfigStatus: failed ? applied(config.configHash, RemoteConfigStatuses.RemoteConfigStatuses_FAILED, "no three") : applied(config.configHash),
      });
    });
    agent.send({ agentDescription: description({ "service.name": `pinned-${index}` }) });
    agents.push(agent);
  }
  const settled = async () => until(async () => (await call<RolloutStatus>("/publish/status")).counts.current === ids.length, 30_000, 50);

  const source = await call<{ id: string }>("/sources", "POST", { name: "app", type: "filelog", config: { include: ["/var/log/one/*.log"] } });
  const destination = await call<{ id: string }>("/destinations", "POST", {
    name: "backend",
    type: "otlphttp",
    config: { endpoint: "https://otlp.example.com" },
  });
  await matchedPipeline(call, "fleet", source.id, destination.id, ["collector.mode=opamp"]);
  const publish = async (path: string, strategy?: Record<string, number>) => {
    if (path !== "/var/log/one/*.log") await call(`/sources/${source.id}`, "PUT", { name: "app", type: "filelog", config: { include: [path] } });
    await call("/commit", "POST", { message: path });
    return call<Rollout>("/publish", "POST", strategy ? { strategy } : undefined);
  };
  await publish("/var/log/one/*.log");
  await settled();
  await publish("/var/log/two/*.log");
  await settled();

  const rollout = await publish("/var/log/three/*.log", { batchSize: 2, failureThreshold: 10 });
  expect(rollout.batchEnds).toEqual([2, 4]);
  const [pinned, mate] = rollout.changed.slice(2) as [string, string];
  await until(async () => ((await call<RolloutStatus>(`/rollouts/${rollout.id}`)).state === "paused" ? true : null), 30_000, 50);
  // Rolled back to the first config while its batch waits: pinned there.
  await call(`/collectors/${pinned}/rollback`, "POST");
  const pinnedTarget = (await server.app.delivery.target(pinned))!.target;
  expect(pinnedTarget.pinned).toBeDefined();
  await until(async () => ((await server.app.delivery.target(pinned))!.target.state === "current" ? true : null), 30_000, 50);
  const sentBefore = sent.get(pinned)!.length;

  expect((await server.api(`/rollouts/${rollout.id}/resume`, { method: "POST" })).status).toBe(200);
  const released = await until(
    async () => {
      const status = await call<RolloutStatus>(`/rollouts/${rollout.id}`);
      return status.batches![1]!.released && status.state === "paused" ? status : null;
    },
    30_000,
    50,
  );
  expect(released.pausedReason).toContain("batch 2");
  // The batch-mate was sent the new config (and failed it); the pinned one was left where it was.
  await until(async () => (sent.get(mate)!.some((body) => body.includes("/var/log/three/")) ? true : null), 30_000, 50);
  const after = (await server.app.delivery.target(pinned))!.target;
  expect({ hash: after.targetHash, seq: after.targetSeq, pinned: after.pinned }).toEqual({
    hash: pinnedTarget.targetHash,
    seq: pinnedTarget.targetSeq,
    pinned: pinnedTarget.pinned,
  });
  expect(
    sent
      .get(pinned)!
      .slice(sentBefore)
      .some((body) => body.includes("/var/log/three/")),
  ).toBe(false);
  expect(sent.get(pinned)!.at(-1)).toContain("/var/log/one/");
}, 120_000);
