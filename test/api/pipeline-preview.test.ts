/**
 * The pipeline preview is what would be delivered (issue 34 item 2), over the
 * real server, real OpAMP WebSockets and the real remote-config channel: for a
 * chosen collector it is byte for byte the config that collector is delivered
 * once the graph is committed and published — an old and a new OpenTelemetry
 * Collector (whose renderings differ: exporter name, filter keys) and an Alloy
 * collector — with secrets as markers; without a collector it names the
 * version it assumed. A collector's preview needs collectors:read besides config:read.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PipelinePreview } from "../../shared/pipelines.ts";
import type { ErrorBody } from "../../server/http/schemas.ts";
import { startTestServer, tokenWithScopes, type TestServer } from "../harness.ts";
import { applied, description, RawAgent, until } from "../opamp/helpers.ts";
import { remoteConfigClient } from "../remotecfg/client.ts";
import { peer } from "../peers/peers.ts";

let server: TestServer;
const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);

/** The destination's sealed header: a preview must never show it. */
const SECRET = "Bearer preview-secret-91c2";
const INSTALLED = /^COLLECTOR_VERSION=(\S+)$/m.exec(await Bun.file(`${import.meta.dir}/../../installer/install.sh`).text())![1]!;

let dir: string;
beforeAll(async () => {
  server = await startTestServer();
  dir = mkdtempSync(join(tmpdir(), "pipeline-preview-"));
});
afterAll(async () => {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** What the real collector (test/peers, 0.149.0: it takes both the old and the new names) says of a config: "" when it loads. */
async function collectorRefusal(name: string, yaml: string): Promise<string> {
  const file = join(dir, `${name}.yaml`);
  writeFileSync(file, yaml);
  const child = Bun.spawn([peer("otelcol"), "validate", `--config=file:${file}`], {
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir },
    stdout: "pipe",
    stderr: "pipe",
    timeout: 60_000,
  });
  const [code, stderr] = await Promise.all([child.exited, new Response(child.stderr).text()]);
  return code === 0 ? "" : `${name}: exit ${code} ${child.signalCode ?? ""}: ${stderr.trim()}`;
}

async function refused(path: string, json: unknown): Promise<ErrorBody["error"] & { status: number }> {
  const res = await server.api(path, { method: "POST", json });
  return { status: res.status, ...((await res.json()) as ErrorBody).error };
}

/** An OpAMP collector tagged team=edge that reports `version` and waits for its first remote config. */
async function opampCollector(name: string, version: string) {
  const { id } = await call<{ id: string }>("/collectors", "POST", { name, tags: { team: "edge" } });
  const token = (await call<{ token: string }>(`/collectors/${id}/otlp-token`, "POST")).token;
  const agent = await RawAgent.connect(`${server.base.replace(/^http/, "ws")}/v1/opamp`, token);
  await agent.call({ agentDescription: description({ "service.name": "otelcol-contrib", "service.version": version }) });
  await until(
    async () => (await call<{ reported?: Record<string, string> }>(`/collectors/${id}`)).reported?.["service.version"] === version,
    10_000,
    20,
    `${name}'s reported version`,
  );
  return { id, agent, pushed: agent.next((m) => m.remoteConfig !== undefined, 20_000) };
}

describe("the preview for a collector is what it is delivered", () => {
  let pipelineId: string;
  let topology: unknown;
  let sourceId: string;
  let destinationId: string;
  const preview = (query: string) => call<PipelinePreview>(`/pipelines/${pipelineId}/topology/preview?${query}`, "POST", topology);

  beforeAll(async () => {
    const source = await call<{ id: string }>("/sources", "POST", { name: "app-logs", type: "filelog", config: { include: ["/var/log/app.log"] } });
    const destination = await call<{ id: string }>("/destinations", "POST", {
      name: "gateway",
      type: "otlp",
      config: { endpoint: "gateway.example.com:4317", headers: { Authorization: SECRET } },
    });
    const pipeline = await call<{ id: string }>("/pipelines", "POST", {
      name: "edge",
      signal: "logs",
      matchers: ["team=edge"],
      topology: {
        nodes: [
          { id: "in", kind: "source", ref: source.id },
          { id: "drop-debug", kind: "processor", processor: { type: "filter", config: { logs: { log_record: ["severity_number < SEVERITY_NUMBER_INFO"] } } } },
          { id: "out", kind: "destination", ref: destination.id },
        ],
        edges: [
          { id: "e1", source: "in", target: "drop-debug" },
          { id: "e2", source: "drop-debug", target: "out" },
        ],
      },
    });
    pipelineId = pipeline.id;
    sourceId = source.id;
    destinationId = destination.id;
    topology = await call(`/pipelines/${pipelineId}/topology`);
  });

  test("old and new OpenTelemetry Collectors and an Alloy collector: preview, stored target and delivery agree byte for byte", async () => {
    const old = await opampCollector("edge-old", "0.120.0");
    const current = await opampCollector("edge-new", "0.159.0");
    const alloy = await call<{ id: string }>("/collectors", "POST", { name: "edge-alloy", managementMode: "rcfg-remotecfg", tags: { team: "edge" } });
    const outsider = await call<{ id: string }>("/collectors", "POST", { name: "elsewhere" });
    try {
      // Previewed before anything is committed: the working tree with the edited graph.
      const oldPreview = await preview(`collectorId=${old.id}`);
      const newPreview = await preview(`collectorId=${current.id}`);
      const alloyPreview = await preview(`collectorId=${alloy.id}`);
      expect(oldPreview.renderedFor).toEqual({
        runtime: "otelcol",
        version: "0.120.0",
        versionFrom: "reported",
        collector: { id: old.id, name: "edge-old", routed: false, matched: true },
      });
      expect(newPreview.renderedFor).toMatchObject({ runtime: "otelcol", version: "0.159.0", versionFrom: "reported" });
      expect(alloyPreview.renderedFor).toMatchObject({ runtime: "alloy", version: null, collector: { id: alloy.id, matched: true } });
      // Upstream's renames by version: the exporter (0.144.0) and the filter's keys (0.146.0).
      expect(oldPreview.config).toContain("otlp/gateway:");
      expect(oldPreview.config).toContain("log_record:");
      expect(newPreview.config).toContain("otlp_grpc/gateway:");
      expect(newPreview.config).toContain("log_conditions:");
      for (const p of [oldPreview, newPreview, alloyPreview]) {
        expect(p.config).not.toContain(SECRET);
        expect(p.config).toMatch(/"<secret:[0-9a-f-]{36}>"/);
      }
      // A collector the pipeline does not apply to: its own (idle) config, and the answer says so.
      const elsewhere = await preview(`collectorId=${outsider.id}`);
      expect(elsewhere.renderedFor.collector).toEqual({ id: outsider.id, name: "elsewhere", routed: false, matched: false });
      expect(elsewhere.config).not.toContain("gateway");

      await call("/commit", "POST", { message: "Edge pipeline" });
      const published = await call<{ changed: string[] }>("/publish", "POST");
      expect(published.changed.sort()).toEqual([old.id, current.id, alloy.id].sort());

      for (const [collector, shown] of [
        [old, oldPreview],
        [current, newPreview],
      ] as const) {
        const stored = (await server.app.delivery.target(collector.id))!.rendered;
        expect(stored.body).toBe(shown.config);
        const message = await collector.pushed;
        const delivered = new TextDecoder().decode(message.remoteConfig!.config!.configMap[""]!.body);
        // Delivery alone puts the plaintext in, where the preview shows the marker.
        expect(delivered).toContain(SECRET);
        expect(delivered).toBe(shown.config.replace(/"<secret:[0-9a-f-]{36}>"/g, JSON.stringify(SECRET)));
        expect(await collectorRefusal(collector.id, delivered)).toBe("");
        await collector.agent.call({ remoteConfigStatus: applied(message.remoteConfig!.configHash) });
      }
      expect((await server.app.delivery.target(alloy.id))!.rendered.body).toBe(alloyPreview.config);
      const token = (await call<{ token: string }>(`/collectors/${alloy.id}/otlp-token`, "POST")).token;
      const answer = await remoteConfigClient(server.base, token).getConfig({ id: alloy.id });
      expect(answer.content).toBe(alloyPreview.config.replace(/"<secret:[0-9a-f-]{36}>"/g, JSON.stringify(SECRET)));
    } finally {
      old.agent.close();
      current.agent.close();
    }
  });

  test("without a collector the preview names the version it assumed: install.sh's, or the one asked for", async () => {
    const assumed = await preview("");
    expect(assumed.renderedFor).toEqual({ runtime: "otelcol", version: INSTALLED, versionFrom: "installer", collector: null });
    expect(assumed.config).toContain(`for otelcol ${INSTALLED};`);
    expect(assumed.config).toContain("otlp_grpc/gateway:");
    const older = await preview("version=0.120.0");
    expect(older.renderedFor).toEqual({ runtime: "otelcol", version: "0.120.0", versionFrom: "requested", collector: null });
    expect(older.config).toContain("otlp/gateway:");
    expect(older.config).not.toContain(SECRET);
    expect((await preview("runtime=alloy")).renderedFor).toMatchObject({ runtime: "alloy", versionFrom: "installer", collector: null });
  });

  test("a collector the pipeline is routed onto is told so", async () => {
    const { id } = await call<{ id: string }>("/collectors", "POST", { name: "routed-1" });
    await call(`/collectors/${id}/sources`, "POST", { sourceId, configOverrides: {} });
    await call(`/collectors/${id}/destinations`, "POST", { destinationId, configOverrides: {} });
    await call("/routes", "POST", { collectorId: id, sourceId, pipelineId });
    const routed = await preview(`collectorId=${id}`);
    expect(routed.renderedFor).toEqual({
      runtime: "otelcol",
      version: null,
      versionFrom: "reported",
      collector: { id, name: "routed-1", routed: true, matched: false },
    });
    // No version reported: the names every supported version accepts, as publish writes for it.
    expect(routed.config).toContain("otlp/gateway:");
  });

  test("bad parameters are refused, each named", async () => {
    const collector = await call<{ id: string }>("/collectors", "POST", { name: "param-check" });
    expect(await refused(`/pipelines/${pipelineId}/topology/preview?collectorId=${collector.id}&runtime=alloy`, topology)).toMatchObject({
      status: 400,
      code: "validation_failed",
      details: [{ path: "runtime", message: "cannot be given with collectorId" }],
    });
    expect(await refused(`/pipelines/${pipelineId}/topology/preview?version=latest`, topology)).toMatchObject({
      status: 400,
      details: [{ path: "version" }],
    });
    expect((await refused(`/pipelines/${pipelineId}/topology/preview?collectorId=no-such-collector`, topology)).status).toBe(404);
    // A collector's preview shows its name and attribute values: config:read alone is not enough for it.
    const token = await tokenWithScopes(server, ["config:read"]);
    const asReader = (query: string) => server.api(`/pipelines/${pipelineId}/topology/preview?${query}`, { method: "POST", json: topology, token });
    expect((await asReader(`collectorId=${collector.id}`)).status).toBe(403);
    expect((await asReader("")).status).toBe(200);
  });
});
