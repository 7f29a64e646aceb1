/**
 * Drift over a real OpAMP WebSocket session (issue 23 part 5): a collector
 * that applied its target and reports an effective config written
 * differently (keys sorted, defaults added, a secret-like value redacted, the
 * supervisor's own extension merged in) is not drifted; one that runs another
 * endpoint is, with the diff, and is listed by GET /collectors/drifted; back
 * on its target, it is cleared. A token the supervisor's merged config
 * carries is never stored.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { create } from "@bufbuild/protobuf";
import { parse, stringify } from "yaml";
import { AgentConfigMapSchema, AgentConfigObjectSchema, EffectiveConfigSchema } from "../../server/gen/opamp/v1/opamp_pb.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { applied, description, RawAgent, until } from "../opamp/helpers.ts";
import { matchedPipeline } from "../deployment.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);

function effective(body: string) {
  const file = create(AgentConfigObjectSchema, { body: new TextEncoder().encode(body), contentType: "text/yaml" });
  return create(EffectiveConfigSchema, { configMap: create(AgentConfigMapSchema, { configMap: { "": file } }) });
}

/** A YAML map with its keys sorted at every level, as yaml.v3 writes the collector's effective config. */
function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.keys(value).sort().map((key) => [key, sorted((value as Record<string, unknown>)[key])]));
  }
  return value;
}

interface Shown {
  target: { drift?: { drifted: boolean; diff: string | null; reason?: string } };
  effective: { files: { body: string }[] } | null;
}

test("drift is told from formatting, listed, shown with its diff, and cleared", async () => {
  const destination = await call<{ id: string }>("/destinations", "POST", { name: "gateway", type: "otlphttp", config: { endpoint: "https://otlp.example.com" } });
  const source = await call<{ id: string }>("/sources", "POST", { name: "app", type: "filelog", config: { include: ["/var/log/app/*.log"] } });
  await matchedPipeline(call, "fleet", source.id, destination.id, ["drift=yes"]);
  const collector = await call<{ id: string }>("/collectors", "POST", { name: "drifting", tags: { drift: "yes" } });
  const token = (await call<{ token: string }>(`/collectors/${collector.id}/otlp-token`, "POST")).token;
  const agent = await RawAgent.connect(`${server.base.replace(/^http/, "ws")}/v1/opamp`, token);
  await agent.call({ agentDescription: description({ "service.name": "drifting" }) });
  const offered = agent.next((m) => m.remoteConfig !== undefined);
  await call("/commit", "POST", { message: "fleet" });
  await call("/publish", "POST");
  const remote = (await offered).remoteConfig!;
  const body = new TextDecoder().decode(remote.config!.configMap[""]!.body);
  const config = parse(body) as Record<string, Record<string, Record<string, unknown>>>;

  // What the collector reports: keys sorted, a default filled in, the supervisor's opamp extension (with the token it dials with).
  const runs = structuredClone(config);
  runs.exporters!["otlphttp/gateway"]!.timeout = "30s";
  runs.extensions = { opamp: { server: { ws: { endpoint: "wss://svc.example.com/v1/opamp", headers: { Authorization: `Bearer ${token}` } } } } };
  (runs.service as Record<string, unknown>).extensions = ["opamp"];
  const shown = () => call<Shown>(`/collectors/${collector.id}/effective-config`);
  await agent.call({ remoteConfigStatus: applied(remote.configHash), effectiveConfig: effective(stringify(sorted(runs))) });
  const clean = await until(async () => ((await shown()).target.drift ? shown() : null));
  expect(clean.target.drift).toMatchObject({ drifted: false, diff: null });
  expect(clean.effective!.files[0]!.body).not.toContain(token);
  expect(clean.effective!.files[0]!.body).toContain("Bearer svcct_[REDACTED]");
  expect((await call<{ items: unknown[] }>("/collectors/drifted")).items).toEqual([]);

  // Someone changed the endpoint on the host.
  runs.exporters!["otlphttp/gateway"]!.endpoint = "https://elsewhere.example.net";
  await agent.call({ effectiveConfig: effective(stringify(sorted(runs))) });
  const drifted = await until(async () => ((await shown()).target.drift?.drifted ? shown() : null));
  expect(drifted.target.drift!.reason).toContain("exporters.otlphttp/gateway.endpoint differs");
  expect(drifted.target.drift!.diff).toMatch(/^-.*https:\/\/otlp\.example\.com/m);
  expect(drifted.target.drift!.diff).toMatch(/^\+.*https:\/\/elsewhere\.example\.net/m);
  const listed = await call<{ items: { collectorId: string; name: string; reason: string }[] }>("/collectors/drifted");
  expect(listed.items).toMatchObject([{ collectorId: collector.id, name: "drifting" }]);

  // Back on its target: cleared.
  await agent.call({ effectiveConfig: effective(body) });
  await until(async () => (await shown()).target.drift?.drifted === false);
  expect((await call<{ items: unknown[] }>("/collectors/drifted")).items).toEqual([]);
  agent.close();
});
