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
import { EFFECTIVE_CONFIG_RATE, MAX_EFFECTIVE_CONFIG_BYTES } from "../../server/rollout/effective-intake.ts";

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
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, sorted((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}

interface Shown {
  target: { state: string; drift?: { drifted: boolean; diff: string | null; reason?: string } };
  effective: { files: { body: string }[] } | null;
}

test("drift is told from formatting, listed, shown with its diff, and cleared", async () => {
  const destination = await call<{ id: string }>("/destinations", "POST", {
    name: "gateway",
    type: "otlphttp",
    config: { endpoint: "https://otlp.example.com" },
  });
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

test("drift is judged only on what the collector reported since its target: an older report is not, one too large or one past the rate makes it not known", async () => {
  const destination = await call<{ id: string }>("/destinations", "POST", {
    name: "gateway-2",
    type: "otlphttp",
    config: { endpoint: "https://otlp.example.com" },
  });
  const source = await call<{ id: string }>("/sources", "POST", { name: "app-2", type: "filelog", config: { include: ["/var/log/app/*.log"] } });
  await matchedPipeline(call, "fleet-2", source.id, destination.id, ["order=yes"]);
  const collector = await call<{ id: string }>("/collectors", "POST", { name: "reporting-in-order", tags: { order: "yes" } });
  const token = (await call<{ token: string }>(`/collectors/${collector.id}/otlp-token`, "POST")).token;
  const agent = await RawAgent.connect(`${server.base.replace(/^http/, "ws")}/v1/opamp`, token);
  const shown = () => call<Shown & { effective: { refused?: unknown } | null }>(`/collectors/${collector.id}/effective-config`);
  try {
    // What it ran before anything was published: kept, but it is not the target's.
    const before = "receivers: {}\nexporters: {}\nservice:\n  pipelines: {}\n";
    await agent.call({ agentDescription: description({ "service.name": "reporting-in-order" }), effectiveConfig: effective(before) });
    await until(async () => (await shown()).effective?.files[0]?.body === before);
    const offered = agent.next((m) => m.remoteConfig !== undefined);
    await call("/commit", "POST", { message: "fleet-2" });
    await call("/publish", "POST");
    const remote = (await offered).remoteConfig!;
    const body = new TextDecoder().decode(remote.config!.configMap[""]!.body);

    // Applied, with no new report yet (the supervisor may send its effective config after the status): the
    // old report is not judged against the target. A report too large to keep is the next drift check, and
    // the first one written for this target: drift is not known.
    await agent.call({ remoteConfigStatus: applied(remote.configHash) });
    await until(async () => (await shown()).target.state === "current");
    await agent.call({ effectiveConfig: effective(`# ${"x".repeat(MAX_EFFECTIVE_CONFIG_BYTES)}\n${body}`) });
    const refused = await until(async () => (await shown()).target.drift);
    expect(refused).toMatchObject({ drifted: false, diff: null, reason: "the collector's last effective config was too large to keep; drift is not known" });

    // What it runs now: judged, no drift.
    await agent.call({ effectiveConfig: effective(body) });
    await until(async () => (await shown()).effective?.files[0]?.body === body);
    expect(await until(async () => ((await shown()).target.drift?.reason === undefined ? (await shown()).target.drift : null))).toMatchObject({
      drifted: false,
      diff: null,
    });

    // The same report again costs nothing; changed ones past the rate are not read, and drift is not known
    // until one is: here the collector repeats the one kept.
    for (let i = 0; i < EFFECTIVE_CONFIG_RATE.burst * 2; i++) await agent.call({ effectiveConfig: effective(body) });
    let reports = 0;
    while ((await shown()).target.drift?.reason === undefined) {
      expect(reports++).toBeLessThan(EFFECTIVE_CONFIG_RATE.burst);
      const changed = `${body}# change ${reports}\n`;
      await agent.call({ effectiveConfig: effective(changed) });
      await until(async () => (await shown()).effective?.files[0]?.body === changed || (await shown()).target.drift?.reason !== undefined);
    }
    expect((await shown()).target.drift!.reason).toBe(
      "the collector reported a newer effective config, not read yet (over its report rate); drift is judged when it is",
    );
    const kept = (await shown()).effective!.files[0]!.body;
    await agent.call({ effectiveConfig: effective(kept) });
    await until(async () => (await shown()).target.drift?.reason === undefined);
    expect((await shown()).target.drift).toMatchObject({ drifted: false, diff: null });
  } finally {
    agent.close();
  }
});
