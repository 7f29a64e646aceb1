/**
 * Trusted targeting (issue 33 item 1) over the real server, a real OpAMP
 * WebSocket and a real remote-config channel: what a collector reports about
 * itself (AgentDescription, local_attributes, deployment.environment at first
 * contact) never selects a pipeline, sets its environment or a tag, nor brings
 * it a destination's secret; a matcher on a reported key no admin trusts is a
 * 400 naming it; once an admin trusts the key (audited) it targets, and it
 * cannot be un-trusted (nor a key trusted) while a pipeline reads it (409
 * naming the pipeline).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Collector } from "../../shared/collectors.ts";
import type { ErrorBody } from "../../server/http/schemas.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { description, RawAgent, until } from "../opamp/helpers.ts";
import { remoteConfigClient } from "../remotecfg/client.ts";

let server: TestServer;
const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);
const wsUrl = () => `${server.base.replace(/^http/, "ws")}/v1/opamp`;

/** The destination's sealed header: a collector that receives it in plaintext was selected. */
const SECRET = "Bearer payments-secret-7f3a";

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

async function refused(path: string, init: { method?: string; json?: unknown } = {}): Promise<ErrorBody["error"] & { status: number }> {
  const res = await server.api(path, init);
  const body = (await res.json()) as ErrorBody;
  return { status: res.status, ...body.error };
}

/** A collector created by an OpAMP agent's first contact with an enrollment token, which describes itself so. */
async function enrolledAgent(identifying: Record<string, string>, nonIdentifying: Record<string, string>): Promise<{ agent: RawAgent; collector: Collector }> {
  const token = (await call<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp" })).token;
  const agent = await RawAgent.connect(wsUrl(), token);
  await agent.call({ agentDescription: description(identifying, nonIdentifying) });
  const name = identifying["host.name"]!;
  const collector = await until(async () => {
    const found = (await call<{ items: Collector[] }>(`/collectors?q=${encodeURIComponent(name)}`)).items.find((c) => c.name === name);
    return found?.reported?.team !== undefined || found?.reported?.["host.name"] !== undefined ? found : null;
  });
  return { agent, collector };
}

describe("a self-reported attribute is a fact, not authority", () => {
  let pipelineId: string;
  let tagged: { id: string };

  beforeAll(async () => {
    const source = await call<{ id: string }>("/sources", "POST", { name: "payments-logs", type: "filelog", config: { include: ["/var/log/payments.log"] } });
    const destination = await call<{ id: string }>("/destinations", "POST", {
      name: "payments-backend",
      type: "otlphttp",
      config: { endpoint: "https://payments.example.com", headers: { Authorization: SECRET } },
    });
    // The team's own collector, tagged in svc.
    tagged = await call<{ id: string }>("/collectors", "POST", { name: "payments-1", tags: { team: "payments" } });
    const pipeline = await call<{ id: string }>("/pipelines", "POST", {
      name: "payments",
      signal: "logs",
      topology: {
        nodes: [
          { id: "in", kind: "source", ref: source.id },
          { id: "out", kind: "destination", ref: destination.id },
        ],
        edges: [{ id: "e1", source: "in", target: "out" }],
      },
      matchers: ["team=payments"],
    });
    pipelineId = pipeline.id;
    await call("/commit", "POST", { message: "Payments pipeline" });
  });

  test("an OpAMP collector reporting team=payments is not selected, is not sent the secret; the tagged one is", async () => {
    const { agent, collector } = await enrolledAgent({ "host.name": "intruder-1" }, { team: "payments" });
    try {
      expect(collector.reported?.team).toBe("payments");
      expect(collector.tags).toEqual({});
      expect(await call(`/collectors/${collector.id}/pipelines`)).toEqual({ items: [] });
      const detail = await call<{ attributes: Record<string, { value: string; origin: string; targets: boolean }> }>(`/collectors/${collector.id}`);
      expect(detail.attributes.team).toEqual({ value: "payments", origin: "reported", targets: false });
      // The list and the preview select by tag only.
      const selected = (await call<{ items: { id: string }[] }>("/collectors?match=team%3Dpayments")).items.map((c) => c.id);
      expect(selected).toEqual([tagged.id]);
      expect((await call<{ count: number }>("/matchers/preview", "POST", { matchers: ["team=payments"] })).count).toBe(1);

      const published = await call<{ changed: string[] }>("/publish", "POST");
      expect(published.changed).toEqual([tagged.id]);
      expect(await server.app.delivery.target(collector.id)).toBeNull();
      // Nothing the intruder was sent holds the plaintext secret; the tagged collector's delivery does.
      await Bun.sleep(50);
      for (const message of agent.received) {
        for (const file of Object.values(message.remoteConfig?.config?.configMap ?? {})) expect(new TextDecoder().decode(file.body)).not.toContain(SECRET);
      }
      const target = (await server.app.delivery.target(tagged.id))!;
      expect(await server.app.delivery.delivered(tagged.id, target.rendered)).toContain(SECRET);
    } finally {
      agent.close();
    }
  });

  test("an Alloy collector reporting team=payments in local_attributes is not selected either", async () => {
    const alloy = await call<{ id: string }>("/collectors", "POST", { name: "alloy-intruder", managementMode: "rcfg-remotecfg" });
    const token = (await call<{ token: string }>(`/collectors/${alloy.id}/otlp-token`, "POST")).token;
    const client = remoteConfigClient(server.base, token);
    await client.registerCollector({ id: alloy.id, name: "alloy-intruder", attributes: {}, localAttributes: { team: "payments" } });
    const answer = await client.getConfig({ id: alloy.id, localAttributes: { team: "payments" } });
    expect(answer.content).not.toContain(SECRET);
    expect(answer.content).not.toContain("payments-backend");
    expect(await call(`/collectors/${alloy.id}/pipelines`)).toEqual({ items: [] });
    expect((await call<Collector>(`/collectors/${alloy.id}`)).reported).toEqual({ team: "payments" });
    await call(`/pipelines/${pipelineId}`);
  });

  test("first contact: deployment.environment and the description set neither environment nor tags; they stay reported", async () => {
    const { agent, collector } = await enrolledAgent(
      { "host.name": "first-contact-1", "service.name": "otelcol-contrib", "service.version": "0.120.0" },
      { "deployment.environment": "production", "deployment.environment.name": "production", "os.type": "linux" },
    );
    try {
      expect(collector.environment).toBeNull();
      expect(collector.tags).toEqual({});
      expect(collector.reported).toMatchObject({ "deployment.environment": "production", "os.type": "linux", "service.version": "0.120.0" });
      expect((await call<{ items: { id: string }[] }>("/collectors?match=environment%3Dproduction")).items).toEqual([]);
    } finally {
      agent.close();
    }
  });
});

describe("matchers on reported keys need an admin's trust", () => {
  let reporter: { agent: RawAgent; collector: Collector };

  beforeAll(async () => {
    reporter = await enrolledAgent({ "host.name": "web-trust-1" }, { "os.type": "linux" });
  });
  afterAll(() => reporter.agent.close());

  test("a matcher on an untrusted reported key is 400 naming it, wherever matchers select collectors", async () => {
    const expectRefused = (problem: Awaited<ReturnType<typeof refused>>, path: string) => {
      expect(problem.status).toBe(400);
      expect(problem.details).toEqual([{ path, message: expect.stringContaining('"host.name" is an attribute collectors report about themselves') }]);
    };
    expectRefused(await refused(`/collectors?match=${encodeURIComponent("host.name=web-trust-1")}`), "match[0]");
    expectRefused(await refused("/matchers/preview", { method: "POST", json: { matchers: ["collector.mode=opamp", 'host.name=~"web-.*"'] } }), "matchers[1]");
    expectRefused(await refused("/collectors/tags", { method: "POST", json: { match: ["host.name=web-trust-1"], set: { tier: "web" } } }), "match[0]");
    expectRefused(
      await refused("/pipelines", { method: "POST", json: { name: "by-host", signal: "logs", matchers: ["host.name=web-trust-1"] } }),
      "matchers[0]",
    );
    expectRefused(await refused("/publish/plan", { method: "POST", json: { match: ["host.name=web-trust-1"] } }), "match[0]");
    // Keys svc sets, and keys no collector reports (a tag to come), pass.
    expect(
      (await call<{ count: number }>("/matchers/preview", "POST", { matchers: ["environment!=x", "future-tag!=y", "collector.mode=opamp"] })).count,
    ).toBeGreaterThan(0);
  });

  test("svc's own attributes cannot be listed as trusted: 400 naming the key", async () => {
    const problem = await refused("/system/trusted-attributes", { method: "PUT", json: { keys: ["os.type", "environment"] } });
    expect(problem.status).toBe(400);
    expect(problem.details).toEqual([{ path: "keys[1]", message: expect.stringContaining("svc's own attribute") }]);
    expect((await call<{ trusted: string[] }>("/system/trusted-attributes")).trusted).toEqual([]);
  });

  test("after an admin trusts host.name (audited), a matcher on it selects and a pipeline may use it; un-trusting it while used is 409 naming the pipeline", async () => {
    const answer = await call<{ configured: string[]; listed: string[]; trusted: string[] }>("/system/trusted-attributes", "PUT", { keys: ["host.name"] });
    expect(answer).toEqual({ configured: [], listed: ["host.name"], trusted: ["host.name"] });
    const audit = await call<{ items: { action: string; details: Record<string, unknown> }[] }>("/audit?action=attributes.trust");
    expect(audit.items.map((e) => e.details)).toEqual([{ added: ["host.name"], removed: [], keys: ["host.name"] }]);

    const id = reporter.collector.id;
    expect((await call<{ items: { id: string }[] }>(`/collectors?match=${encodeURIComponent("host.name=web-trust-1")}`)).items.map((c) => c.id)).toEqual([id]);
    const detail = await call<{ attributes: Record<string, { targets: boolean }> }>(`/collectors/${id}`);
    expect(detail.attributes["host.name"]!.targets).toBe(true);
    expect(detail.attributes["os.type"]!.targets).toBe(false);
    const pipeline = await call<{ id: string }>("/pipelines", "POST", { name: "by-host", signal: "logs", matchers: ["host.name=web-trust-1"] });
    expect(await call(`/collectors/${id}/pipelines`)).toEqual({
      items: [{ pipelineId: pipeline.id, name: "by-host", via: { matchers: ["host.name=web-trust-1"] } }],
    });

    const conflict = await refused("/system/trusted-attributes", { method: "PUT", json: { keys: [] } });
    expect(conflict.status).toBe(409);
    expect(conflict.code).toBe("attribute_in_use");
    expect(conflict.details).toEqual([{ path: `pipelines/${pipeline.id}`, message: 'pipeline "by-host" matches on "host.name"' }]);
    expect(conflict.message).toContain("without a publish");
    expect((await call<{ trusted: string[] }>("/system/trusted-attributes")).trusted).toEqual(["host.name"]);
    expect((await call<{ items: unknown[] }>("/audit?action=attributes.trust")).items).toHaveLength(1);

    // Once no pipeline reads it, it can go (audited), and matchers on it are refused again.
    await call(`/pipelines/${pipeline.id}`, "PUT", { name: "by-host", signal: "logs", matchers: [] });
    expect((await call<{ trusted: string[] }>("/system/trusted-attributes", "PUT", { keys: [] })).trusted).toEqual([]);
    expect((await call<{ items: { details: Record<string, unknown> }[] }>("/audit?action=attributes.trust")).items.map((e) => e.details)).toContainEqual({
      added: [],
      removed: ["host.name"],
      keys: [],
    });
    expect((await refused(`/collectors?match=${encodeURIComponent("host.name=web-trust-1")}`)).status).toBe(400);
  });

  test("trusting a key a pipeline already reads is 409 too: it would move collectors into the pipeline without a publish", async () => {
    // rack is reported by no collector yet, so a pipeline may read it (as a tag to come).
    const pipeline = await call<{ id: string }>("/pipelines", "POST", { name: "by-rack", signal: "logs", matchers: ["rack=r1"] });
    const conflict = await refused("/system/trusted-attributes", { method: "PUT", json: { keys: ["rack"] } });
    expect(conflict.status).toBe(409);
    expect(conflict.details).toEqual([{ path: `pipelines/${pipeline.id}`, message: 'pipeline "by-rack" matches on "rack"' }]);
    expect((await call<{ trusted: string[] }>("/system/trusted-attributes")).trusted).toEqual([]);
    expect((await server.api(`/pipelines/${pipeline.id}`, { method: "DELETE" })).status).toBe(204);
  });
});

describe("fleet.trustedAttributes", () => {
  let configured: TestServer;
  beforeAll(async () => {
    configured = await startTestServer({ SVC_FLEET_TRUSTEDATTRIBUTES: "os.type" });
  });
  afterAll(() => configured.stop());

  test("keys the server configuration trusts target from the start and cannot be dropped through the API", async () => {
    const token = (await configured.call<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp" })).token;
    const agent = await RawAgent.connect(`${configured.base.replace(/^http/, "ws")}/v1/opamp`, token);
    try {
      await agent.call({ agentDescription: description({ "host.name": "cfg-1" }, { "os.type": "windows" }) });
      const ids = async () => (await configured.call<{ items: { id: string }[] }>(`/collectors?match=${encodeURIComponent("os.type=windows")}`)).items;
      expect(await until(async () => ((await ids()).length === 1 ? true : null))).toBe(true);
      expect(await configured.call("/system/trusted-attributes")).toEqual({ configured: ["os.type"], listed: [], trusted: ["os.type"] });
      expect(await configured.call("/system/trusted-attributes", "PUT", { keys: [] })).toEqual({ configured: ["os.type"], listed: [], trusted: ["os.type"] });
    } finally {
      agent.close();
    }
  });
});
