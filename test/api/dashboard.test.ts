/**
 * GET /dashboard over a real fleet (issue 24 part 4): OpAMP collectors that
 * apply, drift, fail and only report, one that said goodbye, two never
 * connected (one Alloy), and own-metrics pushes from each; every count and
 * list the landing page shows is checked against what they did.
 */
import { afterAll, beforeAll, expect, spyOn, test } from "bun:test";
import { create } from "@bufbuild/protobuf";
import { parse, stringify } from "yaml";
import {
  AgentCapabilities,
  AgentConfigMapSchema,
  AgentConfigObjectSchema,
  EffectiveConfigSchema,
  RemoteConfigStatuses,
} from "../../server/gen/opamp/v1/opamp_pb.ts";
import type { Dashboard } from "../../shared/dashboard.ts";
import { startTestServer, tokenWithScopes, type TestServer } from "../harness.ts";
import { applied, description, RawAgent, until } from "../opamp/helpers.ts";
import { cumulativeSum, pushMetrics } from "../telemetry/points.ts";
import { matchedPipeline } from "../deployment.ts";

let server: TestServer;
const agents: RawAgent[] = [];
const ids: Record<string, string> = {};

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  for (const agent of agents) agent.close();
  await server.stop();
});

const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);
const dashboard = () => call<Dashboard>("/dashboard");

function effective(body: string) {
  const file = create(AgentConfigObjectSchema, { body: new TextEncoder().encode(body), contentType: "text/yaml" });
  return create(EffectiveConfigSchema, { configMap: create(AgentConfigMapSchema, { configMap: { "": file } }) });
}

/** A collector's own counters at `seconds`: records accepted by its receiver, items its exporter sent and failed to send. */
async function push(collectorId: string, seconds: number, accepted: number, failed: number) {
  const { token } = await call<{ token: string }>(`/collectors/${collectorId}/otlp-token`, "POST");
  const res = await pushMetrics(server.base, token, [
    cumulativeSum("otelcol_receiver_accepted_log_records", accepted, seconds, { receiver: "filelog/app" }),
    cumulativeSum("otelcol_exporter_sent_log_records", accepted - failed, seconds, { exporter: "otlphttp/backend" }),
    cumulativeSum("otelcol_exporter_send_failed_log_records", failed, seconds, { exporter: "otlphttp/backend" }),
  ]);
  expect(res.status).toBe(200);
}

test("an empty fleet answers zeros, an idle rollout and no rates", async () => {
  const d = await dashboard();
  expect(d.collectors).toEqual({ total: 0, byStatus: { pending: 0, online: 0, degraded: 0, offline: 0 }, byMode: { opamp: 0, "rcfg-remotecfg": 0 } });
  expect(d.rollout).toMatchObject({ rolloutId: null, state: "idle", staged: false, total: 0, failures: [], batches: null });
  expect(d.drifted).toEqual({ count: 0, sample: [] });
  expect(d.reportingOnly).toEqual({ count: 0, sample: [] });
  expect(d.throughput).toEqual({ reporting: 0, byRecords: [], byErrors: [] });
  expect(d.fleetRate).toEqual({ current: null, collectors: null, history: [] });
});

test("every count follows what the collectors did", async () => {
  const destination = await call<{ id: string }>("/destinations", "POST", {
    name: "gateway",
    type: "otlphttp",
    config: { endpoint: "https://otlp.example.com" },
  });
  const source = await call<{ id: string }>("/sources", "POST", { name: "app", type: "filelog", config: { include: ["/var/log/app/*.log"] } });
  await matchedPipeline(call, "fleet", source.id, destination.id, ["fleet=yes"]);
  await call("/commit", "POST", { message: "fleet" });

  for (const name of ["good", "drifting", "failing", "standalone", "gone", "waiting"]) {
    const tags = ["gone", "waiting"].includes(name) ? {} : { fleet: "yes" };
    ids[name] = (await call<{ id: string }>("/collectors", "POST", { name, tags })).id;
  }
  ids.alloy = (await call<{ id: string }>("/collectors", "POST", { name: "alloy-1", managementMode: "rcfg-remotecfg" })).id;

  const connect = async (name: string) => {
    const { token } = await server.app.collectorTokens.mint({ actor: "test", remoteAddr: null }, ids[name]!);
    const agent = await RawAgent.connect(`${server.base.replace(/^http/, "ws")}/v1/opamp`, token);
    agents.push(agent);
    return agent;
  };
  const good = await connect("good");
  const drifting = await connect("drifting");
  const failing = await connect("failing");
  const standalone = await connect("standalone");
  const gone = await connect("gone");
  for (const [agent, name] of [
    [good, "good"],
    [drifting, "drifting"],
    [failing, "failing"],
    [gone, "gone"],
  ] as const) {
    await agent.call({ agentDescription: description({ "service.name": name }) });
  }
  // Without the supervisor: reports, never takes remote config.
  const reportingCaps =
    BigInt(AgentCapabilities.AgentCapabilities_ReportsStatus) |
    BigInt(AgentCapabilities.AgentCapabilities_ReportsEffectiveConfig) |
    BigInt(AgentCapabilities.AgentCapabilities_ReportsHealth);
  await standalone.call({ capabilities: reportingCaps, agentDescription: description({ "service.name": "standalone" }) });
  gone.send({ agentDisconnect: {} });
  await until(async () => (await server.app.collectors.get(ids.gone!)).status === "offline");

  const offers = [good, drifting, failing].map((agent) => agent.next((m) => m.remoteConfig !== undefined));
  await call("/publish", "POST");
  const [toGood, toDrifting, toFailing] = (await Promise.all(offers)).map((m) => m.remoteConfig!);
  const body = new TextDecoder().decode(toGood!.config!.configMap[""]!.body);
  await good.call({ remoteConfigStatus: applied(toGood!.configHash), effectiveConfig: effective(body) });
  const elsewhere = parse(new TextDecoder().decode(toDrifting!.config!.configMap[""]!.body)) as Record<string, Record<string, Record<string, unknown>>>;
  elsewhere.exporters!["otlphttp/gateway"]!.endpoint = "https://elsewhere.example.net";
  await drifting.call({ remoteConfigStatus: applied(toDrifting!.configHash), effectiveConfig: effective(stringify(elsewhere)) });
  await failing.call({
    remoteConfigStatus: applied(toFailing!.configHash, RemoteConfigStatuses.RemoteConfigStatuses_FAILED, "receiver filelog: permission denied"),
  });

  // Own metrics: collector k of these seven receives k×10 records/s for ten minutes; the odd ones fail k/10 items/s.
  const order = ["good", "drifting", "failing", "standalone", "gone", "waiting", "alloy"];
  for (const [index, name] of order.entries()) {
    const k = index + 1;
    await push(ids[name]!, 1000, 0, 0);
    await push(ids[name]!, 1600, k * 6000, k % 2 === 1 ? k * 60 : 0);
  }

  const d = await until(async () => {
    const answer = await dashboard();
    // Status changes are stored within a second (coalesced), so the failed collector turns degraded a little later.
    const settled = answer.drifted.count === 1 && answer.rollout.counts.failed === 1 && answer.rollout.state !== "running";
    return settled && answer.collectors.byStatus.degraded === 1 && answer;
  });
  expect(d.collectors).toEqual({
    total: 7,
    byStatus: { pending: 2, online: 3, degraded: 1, offline: 1 },
    byMode: { opamp: 6, "rcfg-remotecfg": 1 },
  });
  // The same counts System health gives.
  expect((await call<{ collectors: unknown }>("/system/health")).collectors).toEqual(d.collectors.byStatus);

  expect(d.reportingOnly).toEqual({ count: 1, sample: [{ id: ids.standalone!, name: "standalone" }] });
  expect(d.drifted.count).toBe(1);
  expect(d.drifted.sample).toEqual([{ id: ids.drifting!, name: "drifting", reason: expect.stringContaining("exporters.otlphttp/gateway.endpoint differs") }]);

  const status = await call<{ rolloutId: string; total: number }>("/publish/status");
  expect(d.rollout).toMatchObject({
    rolloutId: status.rolloutId,
    state: "completed_with_errors",
    staged: false,
    batches: null,
    pausedReason: null,
    total: status.total,
  });
  expect(d.rollout.counts).toMatchObject({ current: 2, failed: 1, reporting_only: 1, applying: 0, outdated: 0, queued: 0 });
  expect(d.rollout.failures).toEqual([{ id: ids.failing!, name: "failing", error: "receiver filelog: permission denied" }]);

  // What needs attention: each count with its names.
  expect(d.failed).toEqual({ count: 1, sample: [{ id: ids.failing!, name: "failing", error: "receiver filelog: permission denied" }] });
  expect(d.offline).toEqual({ count: 1, sample: [{ id: ids.gone!, name: "gone" }] });
  expect(d.unrenderable).toEqual({ count: 0, sample: [] });
  expect(d.pinned).toEqual({ count: 0, sample: [] });

  // "gone" still pushed its own metrics, but svc sees it offline: it is not counted now.
  expect(d.throughput.reporting).toBe(6);
  const ranked = (list: { id: string; name: string; rate: number }[]) => list.map((r) => [r.name, Math.round(r.rate * 10) / 10]);
  expect(ranked(d.throughput.byRecords)).toEqual([
    ["alloy-1", 70],
    ["waiting", 60],
    ["standalone", 40],
    ["failing", 30],
    ["drifting", 20],
  ]);
  expect(ranked(d.throughput.byErrors)).toEqual([
    ["alloy-1", 0.7],
    ["failing", 0.3],
    ["good", 0.1],
  ]);
  // The number is the chart's newest point: a complete 15 s bucket on a 15 s boundary, inside which every counted
  // collector's ten minutes lie (the offline one's too: it took those records in then).
  const history = d.fleetRate.history;
  for (const p of history) expect(Date.parse(p.time) % 15_000).toBe(0);
  expect(history.at(-1)!.value).toBe(d.fleetRate.current!);
  expect(d.fleetRate.current).toBeCloseTo(280, 1);
  expect(d.fleetRate.collectors).toBe(7);
});

test("a staged rollout shows as staged, with its batches, running then paused", async () => {
  const { items } = await call<{ items: { id: string; name: string }[] }>("/sources");
  const source = items.find((s) => s.name === "app")!;
  await call(`/sources/${source.id}`, "PUT", { name: "app", type: "filelog", config: { include: ["/var/log/two/*.log"] } });
  await call("/commit", "POST", { message: "two" });
  // One collector per batch and an hour between them: it stays on its first batch.
  const rollout = await call<{ id: string; batchEnds: number[] }>("/publish", "POST", {
    strategy: { batchSize: 1, pauseSeconds: 3600, failureThreshold: 100 },
  });
  const running = await dashboard();
  expect(running.rollout).toMatchObject({ rolloutId: rollout.id, staged: true, state: "running", batches: { total: rollout.batchEnds.length, released: 1 } });
  expect(running.rollout.counts.queued).toBe(rollout.batchEnds.length - 1);
  await call(`/rollouts/${rollout.id}/pause`, "POST");
  const paused = await dashboard();
  expect(paused.rollout).toMatchObject({ staged: true, state: "paused", pausedReason: expect.any(String) });
  await call(`/rollouts/${rollout.id}/abort`, "POST");
});

test("a refresh lists nothing from the store: targets and render failures come from memory, kept by the change feed", async () => {
  const before = await dashboard();
  const list = spyOn(server.app.store, "list");
  const getMany = spyOn(server.app.store, "getMany");
  try {
    const again = await dashboard();
    expect(list).not.toHaveBeenCalled();
    expect(getMany.mock.calls.filter(([collection]) => collection === "collector_config" || collection === "render_failures")).toEqual([]);
    expect({ ...again, generatedAt: before.generatedAt, fleetRate: before.fleetRate, throughput: before.throughput }).toEqual(before);
  } finally {
    list.mockRestore();
    getMany.mockRestore();
  }
});

test("a credential with collectors:read reads it; one with only health:read does not", async () => {
  const reader = await tokenWithScopes(server, ["collectors:read"]);
  expect((await server.api("/dashboard", { token: reader })).status).toBe(200);
  const monitor = await tokenWithScopes(server, ["health:read"]);
  expect((await server.api("/dashboard", { token: monitor })).status).toBe(403);
});
