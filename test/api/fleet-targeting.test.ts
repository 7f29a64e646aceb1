/**
 * Fleet targeting over HTTP and a real remote-config channel (issue 22): a
 * pipeline with matchers reaches every collector whose attributes match, with
 * no activation or route; bad matchers are 400 naming `matchers[i]`; a
 * collector's pipelines say why they apply; publish counts matched
 * collectors; a collector that stops matching loses the pipeline at the next
 * publish.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../harness.ts";
import { remoteConfigClient } from "../remotecfg/client.ts";
import { applied, description, RawAgent, until } from "../opamp/helpers.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);

test("matched collectors get the pipeline over their channel; one that stops matching loses it", async () => {
  const source = await call<{ id: string }>("/sources", "POST", { name: "syslog", type: "filelog", config: { include: ["/var/log/syslog"] } });
  const destination = await call<{ id: string }>("/destinations", "POST", {
    name: "backend",
    type: "otlphttp",
    config: { endpoint: "https://otlp.example.com" },
  });
  const topology = {
    nodes: [
      { id: "in", kind: "source", ref: source.id },
      { id: "out", kind: "destination", ref: destination.id },
    ],
    edges: [{ id: "e1", source: "in", target: "out" }],
  };

  const bad = await server.api("/pipelines", { method: "POST", json: { name: "fleet", signal: "logs", topology, matchers: ["env=prod", "region=~"] } });
  expect(bad.status).toBe(400);
  const { error: problem } = (await bad.json()) as { error: { details: { path: string; message: string }[] } };
  expect(problem.details).toHaveLength(1);
  expect(problem.details[0]!.path).toBe("matchers[1]");
  expect(problem.details[0]!.message).toContain("column");

  const pipeline = await call<{ id: string; matchers: string[] }>("/pipelines", "POST", {
    name: "fleet",
    signal: "logs",
    topology,
    matchers: ["env=prod", 'region=~"eu-.*"'],
  });
  expect(pipeline.matchers).toEqual(["env=prod", 'region=~"eu-.*"']);
  expect((await call<{ matchers: string[] }>(`/pipelines/${pipeline.id}`)).matchers).toEqual(pipeline.matchers);
  // PUT without matchers keeps them; with [] clears, then they are put back.
  await call(`/pipelines/${pipeline.id}`, "PUT", { name: "fleet", signal: "logs" });
  expect((await call<{ matchers?: string[] }>(`/pipelines/${pipeline.id}`)).matchers).toEqual(pipeline.matchers);
  expect((await call<{ matchers?: string[] }>(`/pipelines/${pipeline.id}`, "PUT", { name: "fleet", signal: "logs", matchers: [] })).matchers).toBeUndefined();
  await call(`/pipelines/${pipeline.id}`, "PUT", { name: "fleet", signal: "logs", matchers: pipeline.matchers });

  const alloy = await call<{ id: string }>("/collectors", "POST", {
    name: "alloy-eu",
    managementMode: "rcfg-remotecfg",
    tags: { env: "prod", region: "eu-west" },
  });
  const otel = await call<{ id: string }>("/collectors", "POST", { name: "otel-eu", tags: { env: "prod", region: "eu-north" } });
  // Fully anchored: "xeu-west" is not eu-.*; and a staging one.
  const anchored = await call<{ id: string }>("/collectors", "POST", { name: "otel-x", tags: { env: "prod", region: "xeu-west" } });
  const staging = await call<{ id: string }>("/collectors", "POST", { name: "otel-staging", tags: { env: "staging", region: "eu-west" } });

  expect(await call(`/collectors/${alloy.id}/pipelines`)).toEqual({
    items: [{ pipelineId: pipeline.id, name: "fleet", via: { matchers: pipeline.matchers } }],
  });
  expect(await call(`/collectors/${anchored.id}/pipelines`)).toEqual({ items: [] });

  // The OpAMP collector is connected over WebSocket before the publish: the matched pipeline is pushed to it.
  const otelToken = (await call<{ token: string }>(`/collectors/${otel.id}/otlp-token`, "POST")).token;
  const agent = await RawAgent.connect(`${server.base.replace(/^http/, "ws")}/v1/opamp`, otelToken);
  await agent.call({ agentDescription: description({ "service.name": "otel-eu" }) });
  const pushed = agent.next((m) => m.remoteConfig !== undefined);

  await call("/commit", "POST", { message: "Fleet pipeline" });
  const first = await call<{ changed: string[] }>("/publish", "POST");
  const message = await pushed;
  const pushedBody = new TextDecoder().decode(message.remoteConfig!.config!.configMap[""]!.body);
  expect(pushedBody).toContain("filelog/syslog:");
  await agent.call({ remoteConfigStatus: applied(message.remoteConfig!.configHash) });
  await until(async () => (await server.app.delivery.target(otel.id))?.target.state === "current");
  agent.close();
  expect(first.changed.sort()).toEqual([alloy.id, otel.id].sort());
  for (const id of [anchored.id, staging.id]) expect(await server.app.delivery.target(id)).toBeNull();
  const otelTarget = (await server.app.delivery.target(otel.id))!.rendered;
  expect(otelTarget.body).toContain("filelog/syslog:");
  expect(otelTarget.body).toContain("otlphttp/backend:");

  const token = (await call<{ token: string }>(`/collectors/${alloy.id}/otlp-token`, "POST")).token;
  const rcfg = remoteConfigClient(server.base, token);
  const answer = await rcfg.getConfig({ id: alloy.id });
  expect(answer.content).toContain('loki.source.file "syslog"');
  expect(answer.content).toContain('otelcol.exporter.otlphttp "backend"');

  // A route of another source on the same collector is an explicit assignment beside the match.
  const other = await call<{ id: string }>("/sources", "POST", { name: "app", type: "filelog", config: { include: ["/var/log/app.log"] } });
  const routed = await call<{ id: string }>("/pipelines", "POST", {
    name: "routed",
    signal: "logs",
    topology: {
      nodes: [
        { id: "in", kind: "source" },
        { id: "out", kind: "destination", ref: destination.id },
      ],
      edges: [{ id: "e1", source: "in", target: "out" }],
    },
  });
  await call(`/collectors/${alloy.id}/sources`, "POST", { sourceId: other.id });
  await call(`/collectors/${alloy.id}/destinations`, "POST", { destinationId: destination.id });
  const route = await call<{ id: string }>("/routes", "POST", { collectorId: alloy.id, sourceId: other.id, pipelineId: routed.id });
  expect((await call<{ items: unknown[] }>(`/collectors/${alloy.id}/pipelines`)).items).toEqual([
    { pipelineId: routed.id, name: "routed", via: { route: route.id, sourceId: other.id } },
    { pipelineId: pipeline.id, name: "fleet", via: { matchers: pipeline.matchers } },
  ]);

  // The Alloy collector stops matching: the next publish takes the fleet pipeline away, the route stays.
  await call(`/collectors/${alloy.id}`, "PATCH", { tags: { env: "staging", region: "eu-west" } });
  await call("/commit", "POST", { message: "Route app logs" });
  const second = await call<{ changed: string[] }>("/publish", "POST");
  expect(second.changed).toEqual([alloy.id]);
  const after = await rcfg.getConfig({ id: alloy.id, hash: answer.hash });
  expect(after.notModified).toBe(false);
  expect(after.content).not.toContain('loki.source.file "syslog"');
  expect(after.content).toContain('loki.source.file "app"');
  expect((await call<{ items: unknown[] }>(`/collectors/${alloy.id}/pipelines`)).items).toHaveLength(1);

  // A per-collector activation still adds its overrides to what the match brings.
  await call(`/collectors/${otel.id}/sources`, "POST", { sourceId: source.id, configOverrides: { include: ["/srv/eu/syslog"] } });
  await call("/commit", "POST", { message: "otel-eu reads its own syslog" });
  expect((await call<{ changed: string[] }>("/publish", "POST")).changed).toEqual([otel.id]);
  const overridden = (await server.app.delivery.target(otel.id))!.rendered.body;
  expect(overridden).toContain("/srv/eu/syslog");
  expect(overridden).not.toContain("/var/log/syslog");
});

test("a pipeline whose filter reads what Alloy delivers differently is refused while its matchers select an Alloy collector", async () => {
  const destination = await call<{ id: string }>("/destinations", "POST", { name: "gw", type: "otlphttp", config: { endpoint: "https://gw.example.com" } });
  const syslog = await call<{ id: string }>("/sources", "POST", { name: "net", type: "syslog", config: {} });
  await call("/collectors", "POST", { name: "alloy-net", managementMode: "rcfg-remotecfg", tags: { net: "edge" } });
  const body = (matchers: string[]) => ({
    name: "by body",
    signal: "logs",
    matchers,
    topology: {
      nodes: [
        { id: "in", kind: "source", ref: syslog.id },
        { id: "f", kind: "processor", processor: { type: "filter", config: { logs: { log_record: ['IsMatch(body, "healthz")'] } } } },
        { id: "out", kind: "destination", ref: destination.id },
      ],
      edges: [
        { id: "e1", source: "in", target: "f" },
        { id: "e2", source: "f", target: "out" },
      ],
    },
  });
  const res = await server.api("/pipelines", { method: "POST", json: body(["net=edge"]) });
  const { error } = (await res.json()) as { error: { code: string; details: { path: string; message: string }[] } };
  expect({ status: res.status, code: error.code, paths: error.details.map((d) => d.path) }).toEqual({
    status: 409,
    code: "breaks_matched_collectors",
    paths: ["matchers"],
  });
  expect(error.details[0]!.message).toStartWith(
    'on Alloy collector alloy-net, which the matchers select, pipeline "by body" at topology.nodes[f].processor.config.logs.log_record[0]: condition',
  );
  // Selecting only OpenTelemetry Collectors, it is saved; widening it to the Alloy one is refused.
  const saved = await call<{ id: string }>("/pipelines", "POST", body(["net=edge", 'collector.mode="opamp"']));
  const widen = await server.api(`/pipelines/${saved.id}`, { method: "PUT", json: { name: "by body", signal: "logs", matchers: ["net=edge"] } });
  expect(widen.status).toBe(409);
});

test("a pipeline reading a source Alloy cannot run (kubeletstats) is refused while its matchers select an Alloy collector", async () => {
  const destination = await call<{ id: string }>("/destinations", "POST", {
    name: "mimir",
    type: "prometheusremotewrite",
    config: { endpoint: "http://mimir:9009/api/v1/push" },
  });
  const kubelet = await call<{ id: string }>("/sources", "POST", { name: "kubelet", type: "kubeletstats", config: {} });
  await call("/collectors", "POST", { name: "alloy-node", managementMode: "rcfg-remotecfg", tags: { role: "node" } });
  const body = (matchers: string[]) => ({
    name: "node metrics",
    signal: "metrics",
    matchers,
    topology: {
      nodes: [
        { id: "in", kind: "source", ref: kubelet.id },
        { id: "out", kind: "destination", ref: destination.id },
      ],
      edges: [{ id: "e1", source: "in", target: "out" }],
    },
  });
  const res = await server.api("/pipelines", { method: "POST", json: body(["role=node"]) });
  const { error } = (await res.json()) as { error: { code: string; details: { path: string; message: string }[] } };
  expect({ status: res.status, code: error.code }).toEqual({ status: 409, code: "breaks_matched_collectors" });
  expect(error.details[0]!.message).toContain('reads source "kubelet" (kubeletstats), which Alloy cannot run');
  // Selecting only OpenTelemetry Collectors, it is saved.
  await call("/pipelines", "POST", body(["role=node", 'collector.mode="opamp"']));
});
