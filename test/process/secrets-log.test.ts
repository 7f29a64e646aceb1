/**
 * The real server at logging level trace never logs a secret: not the
 * plaintext an older server left in the working tree (moved to the vault at
 * start, which the log says), not one sent through the API (in a good or a
 * refused request), nor one delivered to a collector or reported back by
 * it over OpAMP or remote config.
 */
import { create } from "@bufbuild/protobuf";
import { afterAll, afterEach, expect, test } from "bun:test";
import { join } from "node:path";
import pino from "pino";
import { createApp } from "../../server/app.ts";
import { loadConfig } from "../../server/config/load.ts";
import { toYaml } from "../../server/configstore/layout.ts";
import { EffectiveConfigSchema } from "../../server/gen/collector/v1/collector_pb.ts";
import { AgentConfigMapSchema, EffectiveConfigSchema as OpampEffectiveConfigSchema } from "../../server/gen/opamp/v1/opamp_pb.ts";
import { SqliteStore } from "../../server/store/sqlite.ts";
import { applied, description, RawAgent } from "../opamp/helpers.ts";
import { remoteConfigClient } from "../remotecfg/client.ts";
import { api, bootstrapToken, killAll, removeTempDirs, startServer, tempDir } from "./spawn.ts";

afterEach(killAll);
afterAll(async () => {
  await killAll();
  removeTempDirs();
});

const LEGACY = "Bearer legacy-5e1d-plaintext";
const CREATED = "Bearer created-0b7a-plaintext";
const REPLACED = "Bearer replaced-c4f9-plaintext";
const REFUSED = "Bearer refused-2d83-plaintext";
const OVERRIDE = "Bearer override-77e0-plaintext";
const LEAKS = ["legacy-5e1d", "created-0b7a", "replaced-c4f9", "refused-2d83", "override-77e0"];

/** A state file as a server before secrets were kept apart left it: a destination with a plaintext header, uncommitted. */
async function legacyState(dir: string): Promise<string> {
  const statePath = join(dir, "state.db");
  const config = loadConfig({ path: null, env: { SVC_STORAGE_BOLTPATH: statePath } });
  const store = new SqliteStore(statePath);
  const app = await createApp(config, store, pino({ level: "silent" }));
  const record = {
    id: "dst-legacy",
    name: "legacy",
    type: "otlphttp",
    config: { endpoint: "https://legacy.example.com:4318", headers: { Authorization: LEGACY } },
  };
  await app.configStore.edit([{ path: "destinations/dst-legacy.yaml", text: toYaml(record) }], []);
  await app.stop();
  await store.close();
  return statePath;
}

test("at trace level the log holds no secret, from the start-up upgrade, the API or either collector channel", async () => {
  const dir = tempDir();
  const statePath = await legacyState(dir);
  const token = bootstrapToken();
  const server = await startServer({ statePath, env: { SVC_BOOTSTRAP_ADMINTOKEN: token, SVC_LOGGING_LEVEL: "trace", SVC_EXTERNALURL: "http://127.0.0.1" } });
  const call = async <T>(path: string, method = "GET", json?: unknown, status = method === "POST" ? 201 : 200): Promise<T> => {
    const res = await api(server.base, token, path, { method, json });
    const text = await res.text();
    expect(`${method} ${path} ${res.status}`).toBe(`${method} ${path} ${status}`);
    return (text === "" ? undefined : JSON.parse(text)) as T;
  };

  // The upgrade ran before the server said it was ready, and said what to do next.
  expect(server.stdout()).toContain("moved plaintext secrets found in the working tree to the vault");
  expect((await call<{ config: { headers: unknown } }>("/destinations/dst-legacy")).config.headers).toEqual({
    Authorization: { secret: true, set: true, updatedAt: expect.any(String) },
  });

  const gw = await call<{ id: string; name: string; type: string; config: Record<string, unknown> }>("/destinations", "POST", {
    name: "gw",
    type: "otlphttp",
    config: { endpoint: "https://gw.example.com:4318", headers: { Authorization: CREATED } },
  });
  await call(`/destinations/${gw.id}`, "PUT", { name: gw.name, type: gw.type, config: { ...gw.config, headers: { Authorization: REPLACED } } });
  await call(
    "/destinations",
    "POST",
    { name: "bad", type: "otlphttp", config: { endpoint: "https://gw.example.com:4318", headers: { Authorization: `${REFUSED}\n` } } },
    400,
  );
  await call("/destinations", "POST", { name: "bad", type: "otlphttp", config: { endpoint: 42, headers: { Authorization: REFUSED } } }, 400);

  // Both channels deliver a published config with its secret in, and get it reported back.
  const source = await call<{ id: string }>("/sources", "POST", { name: "app", type: "filelog", config: { include: ["/var/log/app/*.log"] } });
  const pipeline = await call<{ id: string }>("/pipelines", "POST", {
    name: "logs",
    signal: "logs",
    topology: {
      nodes: [
        { id: "in", kind: "source" },
        { id: "out", kind: "destination", ref: gw.id },
      ],
      edges: [{ id: "e1", source: "in", target: "out" }],
    },
  });
  const opamp = await call<{ id: string }>("/collectors", "POST", { name: "log-opamp" });
  const rcfg = await call<{ id: string }>("/collectors", "POST", { name: "log-rcfg", managementMode: "rcfg-remotecfg" });
  for (const collector of [opamp, rcfg]) {
    await call(`/collectors/${collector.id}/sources`, "POST", { sourceId: source.id });
    const configOverrides = collector === opamp ? { headers: { Authorization: OVERRIDE } } : {};
    await call(`/collectors/${collector.id}/destinations`, "POST", { destinationId: gw.id, configOverrides });
    await call("/routes", "POST", { collectorId: collector.id, sourceId: source.id, pipelineId: pipeline.id });
  }
  await call("/commit", "POST", { message: "secrets" });
  await call("/publish", "POST", undefined, 202);

  const enrollment = await call<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp", collectorId: opamp.id });
  const agent = await RawAgent.connect(`${server.base.replace(/^http/, "ws")}/v1/opamp`, enrollment.token);
  try {
    const pushed = agent.next((m) => m.remoteConfig !== undefined);
    agent.send({ agentDescription: description({ "service.name": "log-opamp" }) });
    const delivered = new TextDecoder().decode((await pushed).remoteConfig!.config!.configMap[""]!.body);
    expect(delivered).toContain(JSON.stringify(OVERRIDE));
    const body = new TextEncoder().encode(`exporters:\n  otlphttp:\n    headers:\n      Authorization: ${OVERRIDE}\n`);
    const effectiveConfig = create(OpampEffectiveConfigSchema, {
      configMap: create(AgentConfigMapSchema, { configMap: { "": { body, contentType: "text/yaml" } } }),
    });
    await agent.call({ effectiveConfig, remoteConfigStatus: applied((await pushed).remoteConfig!.configHash) });
  } finally {
    agent.close();
  }

  const rcfgToken = (await call<{ token: string }>(`/collectors/${rcfg.id}/otlp-token`, "POST")).token;
  const remote = remoteConfigClient(server.base, rcfgToken);
  expect((await remote.getConfig({ id: rcfg.id })).content).toContain(JSON.stringify(REPLACED));
  const body = new TextEncoder().encode(`otelcol.exporter.otlphttp "gw" {\n  client {\n    headers = { "Authorization" = "${REPLACED}" }\n  }\n}\n`);
  await remote.getConfig({
    id: rcfg.id,
    effectiveConfig: create(EffectiveConfigSchema, { configMap: { configMap: { "": { body, contentType: "text/plain" } } } }),
  });

  await server.stop("SIGTERM");
  const log = server.stdout() + server.stderr();
  // The log saw the traffic (no module logs more at trace than at info today): the check below has something to look through.
  for (const path of ['"/api/v1/destinations"', '"/v1/opamp"', '"/collector.v1.CollectorService/GetConfig"']) expect(log).toContain(path);
  for (const leak of LEAKS) expect(log).not.toContain(leak);
});
