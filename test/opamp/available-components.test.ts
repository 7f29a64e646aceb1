/**
 * What the supervisor reports of the collector's build (OpAMP
 * available_components), over a real server and raw WebSocket agents: a
 * hash svc has not stored is answered with ReportAvailableComponents, the
 * full report is kept; a publish plan lists a collector whose build lacks a
 * component type its new config uses (with which), and publish skips it
 * (listed in the rollout's skipped, never sent the config) while a
 * collector whose build has them all gets it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { create } from "@bufbuild/protobuf";
import {
  AgentCapabilities,
  AvailableComponentsSchema,
  ComponentDetailsSchema,
  ServerToAgentFlags,
  type AvailableComponents,
} from "../../server/gen/opamp/v1/opamp_pb.ts";
import { lackingChecker, lackingComponents, lackingReason } from "../../server/collectors/builds.ts";
import type { PublishPlan, Rollout } from "../../shared/rollouts.ts";
import { deploymentKit } from "../deployment.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { CAPS, description, RawAgent } from "./helpers.ts";

const REPORTS = CAPS | BigInt(AgentCapabilities.AgentCapabilities_ReportsAvailableComponents);
const ASK = BigInt(ServerToAgentFlags.ServerToAgentFlags_ReportAvailableComponents);
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ SVC_EXTERNALURL: "https://svc.example.com" });
});
afterAll(() => server.stop());

const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);

/** A build report as the collector's OpAMP extension makes it: kind → type → details. */
function build(receivers: string[], hash: number): AvailableComponents {
  const kinds = {
    receivers,
    processors: ["batch", "filter"],
    exporters: ["otlphttp", "otlp"],
    extensions: ["opamp", "health_check"],
    connectors: [] as string[],
  };
  const components = Object.fromEntries(
    Object.entries(kinds).map(([kind, types]) => [
      kind,
      create(ComponentDetailsSchema, { subComponentMap: Object.fromEntries(types.map((t) => [t, create(ComponentDetailsSchema, {})])) }),
    ]),
  );
  return create(AvailableComponentsSchema, { hash: new Uint8Array([hash, 1, 2, 3]), components });
}

/** Connects and reports its build as opamp-go does: the hash, then the whole of it when asked. */
async function reporting(name: string, receivers: string[], hash: number) {
  const collector = await call<{ id: string }>("/collectors", "POST", { name });
  const { token } = await server.app.collectorTokens.mint({ actor: "test", remoteAddr: null }, collector.id);
  const agent = await RawAgent.connect(`${server.base.replace(/^http/, "ws")}/v1/opamp`, token);
  const full = build(receivers, hash);
  const asked = await agent.call({
    agentDescription: description({ "service.name": name }),
    capabilities: REPORTS,
    availableComponents: create(AvailableComponentsSchema, { hash: full.hash }),
  });
  expect(asked.flags & ASK).toBe(ASK);
  const kept = await agent.call({ capabilities: REPORTS, availableComponents: full });
  expect(kept.flags & ASK).toBe(0n);
  // The hash alone again: known, not asked for.
  expect((await agent.call({ capabilities: REPORTS, availableComponents: create(AvailableComponentsSchema, { hash: full.hash }) })).flags & ASK).toBe(0n);
  return { id: collector.id, agent };
}

test("a collector whose build lacks a receiver its config uses is listed by the plan and skipped by publish; one with the receiver gets it", async () => {
  const route = await deploymentKit(call);
  const slim = await reporting("slim-build", ["otlp"], 1);
  const full = await reporting("full-build", ["otlp", "filelog"], 2);
  await route(slim.id);
  await route(full.id);
  await call("/commit", "POST", { message: "filelog for both" });

  const plan = await call<PublishPlan>("/publish/plan", "POST", {});
  expect(plan.lacking).toEqual([{ collectorId: slim.id, name: "slim-build", missing: ["receiver/filelog"] }]);
  expect(plan.changes.map((c) => c.collectorId)).toEqual([full.id]);

  const pushed = full.agent.next((m) => m.remoteConfig !== undefined);
  const rollout = await call<Rollout>("/publish", "POST", {});
  expect(rollout.skipped).toEqual([{ collectorId: slim.id, name: "slim-build", path: "components", message: lackingReason(["receiver/filelog"]) }]);
  expect(rollout.changed).toEqual([full.id]);
  expect(new TextDecoder().decode((await pushed).remoteConfig!.config!.configMap[""]!.body)).toContain("filelog");
  expect(await server.app.delivery.target(slim.id)).toBeNull();
  await slim.agent.call({ capabilities: REPORTS });
  expect(slim.agent.received.some((m) => m.remoteConfig !== undefined)).toBe(false);
  slim.agent.close();
  full.agent.close();
});

test("every defined component counts, used in a pipeline or not; an empty report says nothing", () => {
  const body =
    "receivers:\n  otlp: {}\n  kafka/in: {}\nprocessors:\n  batch: {}\nexporters:\n  debug: {}\nconnectors:\n  forward: {}\nservice:\n  pipelines: {}\n";
  const have = { receivers: ["otlp"], processors: ["batch"], exporters: ["otlphttp"], extensions: [], connectors: [] };
  expect(lackingComponents(body, { components: have })).toEqual(["connector/forward", "exporter/debug", "receiver/kafka"]);
  expect(lackingComponents(body, { components: { receivers: [], processors: [], exporters: [], extensions: [], connectors: [] } })).toEqual([]);
});

test("a fleet's check reads each config once per key and answers each build as the one-off check does", () => {
  const body = "receivers:\n  otlp: {}\n  kafka/in: {}\nexporters:\n  debug: {}\nservice:\n  pipelines: {}\n";
  const slim = { receivers: ["otlp"], processors: [], exporters: ["otlphttp"], extensions: [], connectors: [] };
  const full = { receivers: ["otlp", "kafka"], processors: [], exporters: ["debug"], extensions: [], connectors: [] };
  const lacks = lackingChecker();
  expect(lacks("k", body, { components: slim })).toEqual(lackingComponents(body, { components: slim }));
  expect(lacks("k", body, { components: full })).toEqual([]);
  // The key stands for the components: a body given again under it is not read again.
  expect(lacks("k", "not: [yaml", { components: slim })).toEqual(["exporter/debug", "receiver/kafka"]);
  expect(lacks("other", "not: [yaml", { components: slim })).toEqual([]);
});
