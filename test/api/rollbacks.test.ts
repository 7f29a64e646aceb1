/**
 * Rollbacks that hold (issue 23 parts 3 and 4): an operator's rollback pins
 * the collector, so two fleet publishes pass it by (the plan says so) until a
 * publish names it or it is unpinned; history entries say what became of
 * them; and a collector that goes back to its last good config on its own
 * (APPLIED A → APPLYING B → FAILED B → APPLIED A, as the OpAMP supervisor
 * does) is shown so, counted failed, and not re-offered B until a retry or a
 * new publish — with a real opamp-go client over WebSocket and over HTTP, and
 * over remote config.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../harness.ts";
import { until } from "../opamp/helpers.ts";
import { OpampGo, opampUrls, TRANSPORTS } from "../opamp/opamp-go.ts";
import { remoteConfigClient } from "../remotecfg/client.ts";
import { RemoteConfigStatuses as PollStatus } from "../../server/gen/collector/v1/collector_pb.ts";
import type { HistoryEntry, PublishPlan, Rollout, RolloutStatus } from "../../shared/rollouts.ts";
import { matchedPipeline } from "../deployment.ts";

let server: TestServer;
let go: OpampGo;
beforeAll(async () => {
  server = await startTestServer();
  go = new OpampGo();
});
afterAll(async () => {
  await go.close();
  await server.stop();
});

const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);

/** A fleet pipeline every collector tagged fleet=yes runs, with a source whose path says which version it is. */
async function fleetPipeline() {
  const source = await call<{ id: string }>("/sources", "POST", { name: "app", type: "filelog", config: { include: ["/var/log/v1/*.log"] } });
  const destination = await call<{ id: string }>("/destinations", "POST", {
    name: "backend",
    type: "otlphttp",
    config: { endpoint: "https://otlp.example.com" },
  });
  await matchedPipeline(call, "fleet", source.id, destination.id, ["fleet=yes"]);
  return async (version: string) => {
    await call(`/sources/${source.id}`, "PUT", { name: "app", type: "filelog", config: { include: [`/var/log/${version}/*.log`] } });
    await call("/commit", "POST", { message: version });
  };
}

const target = async (id: string) => (await server.app.delivery.target(id))!;
const states = async (id: string) => (await call<{ items: HistoryEntry[] }>(`/collectors/${id}/config-history`)).items.map((e) => e.state);

test("a rolled-back collector stays pinned through two fleet publishes until a publish names it", async () => {
  const release = await fleetPipeline();
  const pinned = await call<{ id: string; name: string }>("/collectors", "POST", { name: "pinned", tags: { fleet: "yes" } });
  const other = await call<{ id: string }>("/collectors", "POST", { name: "other", tags: { fleet: "yes" } });
  await call("/commit", "POST", { message: "v1" });
  await call("/publish", "POST");
  const v1 = (await target(pinned.id)).target.targetHash;
  await release("v2");
  await call("/publish", "POST");
  await call(`/collectors/${pinned.id}/rollback`, "POST");
  expect((await target(pinned.id)).target.targetHash).toBe(v1);
  const shown = await call<{ target: { pinned?: { actor: string } } }>(`/collectors/${pinned.id}/effective-config`);
  expect(shown.target.pinned?.actor).toBe("sa:admin");

  for (const version of ["v3", "v4"]) {
    await release(version);
    const plan = await call<PublishPlan>("/publish/plan", "POST", {});
    expect(plan.pinned.map((p) => p.collectorId)).toEqual([pinned.id]);
    expect(plan.changes.map((c) => c.collectorId)).toEqual([other.id]);
    const rollout = await call<Rollout>("/publish", "POST");
    expect(rollout.pinned).toEqual([pinned.id]);
    expect((await target(pinned.id)).target.targetHash).toBe(v1);
    expect((await target(other.id)).rendered.body).toContain(`/var/log/${version}/`);
  }
  // The history says what became of each config: v1 superseded by v2, v2 rolled back, v1 again current (not yet applied: outdated).
  expect(await states(pinned.id)).toEqual(["superseded", "rolled_back", "outdated"]);
  expect(await states(other.id)).toEqual(["superseded", "superseded", "superseded", "outdated"]);

  // Named, it is included (and no longer pinned); unpinning what is not pinned is a conflict.
  const plan = await call<PublishPlan>("/publish/plan", "POST", { collectorIds: [pinned.id] });
  expect(plan.pinned).toEqual([]);
  expect(plan.changes.map((c) => c.collectorId)).toEqual([pinned.id]);
  await call(`/publish/${pinned.id}`, "POST");
  expect((await target(pinned.id)).rendered.body).toContain("/var/log/v4/");
  expect((await target(pinned.id)).target.pinned).toBeUndefined();
  expect((await server.api(`/collectors/${pinned.id}/pin`, { method: "DELETE" })).status).toBe(409);

  // Rolled back again and unpinned: the next fleet publish reaches it.
  await call(`/collectors/${pinned.id}/rollback`, "POST");
  expect((await server.api(`/collectors/${pinned.id}/pin`, { method: "DELETE" })).status).toBe(204);
  await release("v5");
  await call("/publish", "POST");
  expect((await target(pinned.id)).rendered.body).toContain("/var/log/v5/");
  const audit = (await call<{ items: { action: string }[] }>("/audit?limit=100")).items.map((e) => e.action);
  expect(audit).toContain("config.unpin");
});

// A real opamp-go client, scripted as the supervisor reports: each status is reported once svc has
// the one before (opamp-go sends only the latest of statuses set at once, as it would for a collector
// that fails at once).
describe.each(TRANSPORTS)("over %s", (transport) => {
  test("the collector's own rollback is recognized, counted failed, and not re-offered until a retry or a new publish", async () => {
    const release = await fleetPipeline();
    const tag = `supervised-${transport}`;
    const collector = await call<{ id: string }>("/collectors", "POST", { name: tag, tags: { fleet: "yes", [tag]: "yes" } });
    const token = (await call<{ token: string }>(`/collectors/${collector.id}/otlp-token`, "POST")).token;
    const agent = await go.agent({ url: opampUrls(server.base)[transport], token, description: { identifying: { "service.name": tag } }, heartbeatSeconds: 1 });
    const state = async () => (await target(collector.id)).target;
    const failure = "collector exited: open /var/log/bad: permission denied";
    const publish = () => call<Rollout>("/publish", "POST", { match: [`${tag}=yes`] });
    /** Waits until opamp-go hands over the collector's target (an earlier one may come first: it was created into the fleet). */
    const offered = async (what: string, from: number) => {
      const { hash } = (await target(collector.id)).rendered;
      await agent.waitFor((e) => e.remoteConfig?.hash === hash, what, 15_000, from);
      return hash;
    };
    /** Its next answers show what it was sent meanwhile. */
    const answers = async (what: string) => {
      const from = agent.mark();
      await agent.waitFor(() => agent.count((e) => e.event === "message", from) >= 3, `3 answers ${what}`, 30_000, from);
      return agent.events.slice(from);
    };

    await release("good");
    let from = agent.mark();
    await publish();
    const a = await offered("config A", from);
    await agent.status(a);
    await until(async () => (await state()).state === "current");
    // Created matching the fleet pipeline, it was given the last fleet publish's config before this one.
    const good = (await state()).targetSeq;

    await release("bad");
    from = agent.mark();
    const rollout = await publish();
    const b = await offered("config B", from);
    expect(b).not.toBe(a);
    // The supervisor: applying B, B failed, back on A.
    await agent.status(b, "APPLYING");
    await agent.status(b, "FAILED", failure);
    await until(async () => (await state()).state === "failed");
    await agent.status(a);
    const rolledBack = await until(async () => {
      const t = await state();
      return t.collectorRollback ? t : null;
    });
    expect(rolledBack.state).toBe("failed");
    expect(rolledBack.error).toBe(`The collector rolled back to the config of #${good} after this one failed: ${failure}.`);
    await until(async () => (await states(collector.id)).slice(-2).join() === "superseded,rolled_back_by_collector");
    const history = (await call<{ items: HistoryEntry[] }>(`/collectors/${collector.id}/config-history`)).items;
    expect(history[history.length - 1]).toMatchObject({ collectorRolledBackTo: good, error: failure });
    expect((await call<RolloutStatus>(`/rollouts/${rollout.id}`)).counts.failed).toBe(1);

    // Not offered again while it goes on (a WebSocket supervisor stays connected, an HTTP one polls on).
    expect((await answers("after the rollback")).filter((e) => e.remoteConfig)).toEqual([]);
    const audit = (await call<{ items: { action: string }[] }>("/audit?limit=100")).items.map((e) => e.action);
    expect(audit).toContain("config.collector_rollback");

    // An explicit retry offers B again.
    from = agent.mark();
    expect((await server.api(`/collectors/${collector.id}/retry`, { method: "POST" })).status).toBe(204);
    expect(await offered("config B again, after the retry", from)).toBe(b);
    expect((await state()).collectorRollback).toBeUndefined();
    // It fails again and goes back again: restarted later with A as its status, B is still not offered.
    await agent.status(b, "FAILED", failure);
    await until(async () => (await state()).state === "failed");
    await agent.status(a);
    await until(async () => (await state()).collectorRollback !== undefined);
    await agent.restart();
    expect((await answers("after the restart")).filter((e) => e.remoteConfig)).toEqual([]);

    // Retried and applied this time: the entry reads current, not rolled back by the collector.
    from = agent.mark();
    expect((await server.api(`/collectors/${collector.id}/retry`, { method: "POST" })).status).toBe(204);
    expect(await offered("config B after the second retry", from)).toBe(b);
    await agent.status(b);
    await until(async () => (await states(collector.id)).slice(-1)[0] === "current");
    const last = (await call<{ items: HistoryEntry[] }>(`/collectors/${collector.id}/config-history`)).items.at(-1)!;
    expect(last.collectorRolledBackTo).toBeUndefined();
    expect(last.applied).toBe(true);
    expect(agent.count((e) => e.event === "error")).toBe(0);
    await agent.stop();
  }, 90_000);
});

test("a remote-config collector that goes back to its earlier config is not sent the failed one again until a retry", async () => {
  const release = await fleetPipeline();
  const collector = await call<{ id: string }>("/collectors", "POST", {
    name: "alloy-back",
    managementMode: "rcfg-remotecfg",
    tags: { fleet: "yes", alloyback: "yes" },
  });
  const token = (await call<{ token: string }>(`/collectors/${collector.id}/otlp-token`, "POST")).token;
  const client = remoteConfigClient(server.base, token);
  const status = (state: PollStatus, errorMessage = "") => ({ status: state, errorMessage });

  await release("alloy-good");
  await call("/publish", "POST", { match: ["alloyback=yes"] });
  const a = await client.getConfig({ id: collector.id });
  await client.getConfig({ id: collector.id, hash: a.hash, remoteConfigStatus: status(PollStatus.RemoteConfigStatuses_APPLIED) });
  await until(async () => (await target(collector.id)).target.state === "current");
  // Created matching the fleet pipeline, it was given the last fleet publish's config before this one.
  const good = (await target(collector.id)).target.targetSeq;

  await release("alloy-bad");
  await call("/publish", "POST", { match: ["alloyback=yes"] });
  const b = await client.getConfig({ id: collector.id, hash: a.hash, remoteConfigStatus: status(PollStatus.RemoteConfigStatuses_APPLIED) });
  expect(b.hash).not.toBe(a.hash);
  expect(b.content).toContain("/var/log/alloy-bad/");
  await client.getConfig({ id: collector.id, hash: b.hash, remoteConfigStatus: status(PollStatus.RemoteConfigStatuses_FAILED, "loading failed") });
  await until(async () => (await target(collector.id)).target.state === "failed");
  // Back on A: recognized, and the next polls are not sent B.
  await client.getConfig({ id: collector.id, hash: a.hash, remoteConfigStatus: status(PollStatus.RemoteConfigStatuses_APPLIED) });
  await until(async () => (await target(collector.id)).target.collectorRollback !== undefined);
  const again = await client.getConfig({ id: collector.id, hash: a.hash, remoteConfigStatus: status(PollStatus.RemoteConfigStatuses_APPLIED) });
  expect(again.notModified).toBe(true);
  expect(again.content).toBe("");
  expect((await target(collector.id)).target.error).toBe(`The collector rolled back to the config of #${good} after this one failed: loading failed.`);

  expect((await server.api(`/collectors/${collector.id}/retry`, { method: "POST" })).status).toBe(204);
  await until(async () => (await target(collector.id)).target.collectorRollback === undefined);
  const retried = await client.getConfig({ id: collector.id, hash: a.hash, remoteConfigStatus: status(PollStatus.RemoteConfigStatuses_APPLIED) });
  expect(retried.hash).toBe(b.hash);
  expect(retried.content).toContain("/var/log/alloy-bad/");
});

test("a rollback goes back to the last config the collector applied, past ones it failed", async () => {
  const release = await fleetPipeline();
  const collector = await call<{ id: string }>("/collectors", "POST", { name: "twice-failed", tags: { fleet: "yes", twice: "yes" } });
  const token = (await call<{ token: string }>(`/collectors/${collector.id}/otlp-token`, "POST")).token;
  const agent = await go.agent({ url: opampUrls(server.base).ws, token, description: { identifying: { "service.name": "twice-failed" } } });
  const answer = async (version: string, ok: boolean) => {
    await release(version);
    const from = agent.mark();
    await call("/publish", "POST", { match: ["twice=yes"] });
    const { hash } = (await target(collector.id)).rendered;
    await agent.waitFor((e) => e.remoteConfig?.hash === hash, `config ${version}`, 15_000, from);
    await (ok ? agent.status(hash) : agent.status(hash, "FAILED", `${version} is bad`));
    await until(async () => (await target(collector.id)).target.state === (ok ? "current" : "failed"));
  };
  await answer("works", true);
  await answer("bad-one", false);
  await answer("bad-two", false);
  const entry = await call<HistoryEntry>(`/collectors/${collector.id}/rollback`, "POST");
  expect((await target(collector.id)).rendered.body).toContain("/var/log/works/");
  expect(entry.commit).toBe(
    (await call<{ items: HistoryEntry[] }>(`/collectors/${collector.id}/config-history`)).items.find((e) => e.seq === entry.rollbackOf)!.commit,
  );
  // Failed wins over rolled back: the entry says what the collector made of it (its history is written a moment after the target).
  await until(async () => (await states(collector.id)).slice(-4).join() === "superseded,failed,failed,outdated");
  await agent.stop();
});
