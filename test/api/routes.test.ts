/**
 * /routes over HTTP: a route is re-pointed with PUT under the same checks as
 * a new one, each refusal names its field, and the audit log records it.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../harness.ts";
import type { ErrorBody } from "../../server/http/schemas.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

interface RouteRecord {
  id: string;
  collectorId: string;
  sourceId: string;
  pipelineId: string;
}

const ok = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);

async function refused(path: string, json: unknown, status: number, code: string): Promise<ErrorBody["error"]> {
  const res = await server.api(path, { method: "PUT", json });
  const body = (await res.json()) as ErrorBody;
  expect({ status: res.status, code: body.error?.code }).toEqual({ status, code });
  return body.error;
}

/** A collector with two active log sources, one inactive source, a logs pipeline and a metrics pipeline. */
async function fixture() {
  const destination = await ok<{ id: string }>("/destinations", "POST", { name: "dbg", type: "debug", config: {} });
  const source = (name: string) => ok<{ id: string }>("/sources", "POST", { name, type: "filelog", config: { include: [`/var/log/${name}.log`] } });
  const [a, b, idle] = await Promise.all([source("a"), source("b"), source("idle")]);
  const graph = {
    nodes: [
      { id: "in", kind: "source" },
      { id: "out", kind: "destination", ref: destination.id },
    ],
    edges: [{ id: "e", source: "in", target: "out" }],
  };
  const logs = await ok<{ id: string }>("/pipelines", "POST", { name: "logs", signal: "logs", topology: graph });
  const other = await ok<{ id: string }>("/pipelines", "POST", { name: "logs 2", signal: "logs", topology: graph });
  const metrics = await ok<{ id: string }>("/pipelines", "POST", { name: "metrics", signal: "metrics", topology: graph });
  const collector = await ok<{ id: string }>("/collectors", "POST", { name: "web-1" });
  for (const s of [a, b]) await ok(`/collectors/${collector.id}/sources`, "POST", { sourceId: s.id, configOverrides: {} });
  return { a, b, idle, logs, other, metrics, collector };
}

test("PUT re-points a route, is refused like a create, and is audited", async () => {
  const f = await fixture();
  const route = await ok<RouteRecord>("/routes", "POST", { collectorId: f.collector.id, sourceId: f.a.id, pipelineId: f.logs.id });
  const twin = await ok<RouteRecord>("/routes", "POST", { collectorId: f.collector.id, sourceId: f.b.id, pipelineId: f.other.id });

  const { differences, ...moved } = await ok<RouteRecord & { differences: unknown[] }>(`/routes/${route.id}`, "PUT", {
    collectorId: f.collector.id,
    sourceId: f.b.id,
    pipelineId: f.logs.id,
  });
  expect(moved).toEqual({ id: route.id, collectorId: f.collector.id, sourceId: f.b.id, pipelineId: f.logs.id });
  expect(differences).toEqual([]); // a Runtime O collector: the reference runtime
  expect(await ok<RouteRecord>(`/routes/${route.id}`)).toEqual(moved);
  // Saving a route unchanged is not a duplicate of itself.
  expect(await ok(`/routes/${route.id}`, "PUT", { collectorId: f.collector.id, sourceId: f.b.id, pipelineId: f.logs.id })).toEqual({
    ...moved,
    differences: [],
  });

  const inactive = await refused(`/routes/${route.id}`, { collectorId: f.collector.id, sourceId: f.idle.id, pipelineId: f.logs.id }, 400, "validation_failed");
  expect(inactive.details.map((d) => d.path)).toEqual(["sourceId"]);
  const wrongSignal = await refused(
    `/routes/${route.id}`,
    { collectorId: f.collector.id, sourceId: f.b.id, pipelineId: f.metrics.id },
    400,
    "validation_failed",
  );
  expect(wrongSignal.details.map((d) => d.path)).toContain("pipelineId");
  const duplicate = await refused(`/routes/${route.id}`, { collectorId: f.collector.id, sourceId: f.b.id, pipelineId: f.other.id }, 409, "already_exists");
  expect(duplicate.message).toContain(twin.id);
  await refused(`/routes/${route.id}`, { collectorId: f.collector.id, sourceId: f.b.id, pipelineId: "ghost" }, 404, "not_found");
  await refused("/routes/ghost", { collectorId: f.collector.id, sourceId: f.b.id, pipelineId: f.logs.id }, 404, "not_found");
  await refused(`/routes/${route.id}`, { collectorId: f.collector.id, sourceId: f.b.id }, 400, "validation_failed");
  expect(await ok<RouteRecord>(`/routes/${route.id}`)).toEqual(moved); // no refusal changed anything

  const audit = await ok<{ items: { action: string; resourceId: string; details: Record<string, unknown> }[] }>("/audit?action=route.update");
  expect(audit.items.map((e) => e.resourceId)).toEqual([route.id, route.id]);
  expect(audit.items.at(-1)!.details).toMatchObject({ sourceId: f.b.id, previous: { sourceId: f.a.id } });
});

test("a Runtime R (Alloy) collector refuses the debug destination, at activation and at routing, saying why", async () => {
  const debug = await ok<{ id: string }>("/destinations", "POST", { name: "dbg-r", type: "debug", config: {} });
  const source = await ok<{ id: string }>("/sources", "POST", { name: "r-files", type: "filelog", config: { include: ["/var/log/r.log"] } });
  const graph = {
    nodes: [
      { id: "in", kind: "source" },
      { id: "out", kind: "destination", ref: debug.id },
    ],
    edges: [{ id: "e", source: "in", target: "out" }],
  };
  const pipeline = await ok<{ id: string }>("/pipelines", "POST", { name: "to debug", signal: "logs", topology: graph });
  const alloy = await ok<{ id: string }>("/collectors", "POST", { name: "alloy-1", managementMode: "rcfg-remotecfg" });
  await ok(`/collectors/${alloy.id}/sources`, "POST", { sourceId: source.id, configOverrides: {} });

  const activation = await server.api(`/collectors/${alloy.id}/destinations`, { method: "POST", json: { destinationId: debug.id, configOverrides: {} } });
  const activationError = ((await activation.json()) as ErrorBody).error;
  expect(activation.status).toBe(400);
  expect(activationError.details).toEqual([
    {
      path: "destinationId",
      message: `destination "dbg-r" (debug) cannot run on collector ${alloy.id}, an Alloy (remote config) collector: Alloy's debug exporter (otelcol.exporter.debug) is experimental, and Alloy loads only generally-available components by default`,
    },
  ]);
  expect((await ok<{ items: unknown[] }>(`/collectors/${alloy.id}/destinations`)).items).toEqual([]);

  const route = await server.api("/routes", { method: "POST", json: { collectorId: alloy.id, sourceId: source.id, pipelineId: pipeline.id } });
  const routeError = ((await route.json()) as ErrorBody).error;
  expect(route.status).toBe(400);
  expect(routeError.details.map((d) => d.path)).toEqual(["pipelineId"]);
  expect(routeError.details[0]!.message).toContain('sends to destination "dbg-r" (debug), which cannot run on this Alloy (remote config) collector');

  // A routed pipeline cannot be redrawn to send there either.
  const backend = await ok<{ id: string }>("/destinations", "POST", { name: "backend-r", type: "otlphttp", config: { endpoint: "https://otlp.example.com" } });
  await ok(`/collectors/${alloy.id}/destinations`, "POST", { destinationId: backend.id, configOverrides: {} });
  const toBackend = {
    nodes: [
      { id: "in", kind: "source" },
      { id: "out", kind: "destination", ref: backend.id },
    ],
    edges: [{ id: "e", source: "in", target: "out" }],
  };
  const routed = await ok<{ id: string }>("/pipelines", "POST", { name: "to backend", signal: "logs", topology: toBackend });
  const kept = await ok<RouteRecord>("/routes", "POST", { collectorId: alloy.id, sourceId: source.id, pipelineId: routed.id });
  const redraw = await server.api(`/pipelines/${routed.id}/topology`, { method: "PUT", json: graph });
  const redrawError = ((await redraw.json()) as ErrorBody).error;
  expect({ status: redraw.status, code: redrawError.code }).toEqual({ status: 409, code: "breaks_routes" });
  expect(redrawError.details).toEqual([
    { path: `routes/${kept.id}`, message: expect.stringContaining('"dbg-r" (debug), which cannot run on this Alloy (remote config) collector') },
  ]);
  expect(await ok(`/pipelines/${routed.id}/topology`)).toEqual(toBackend);

  // The catalog says so, for the UI.
  const catalog = await ok<{ destinations: { type: string; runtimes: string[]; unavailable?: { alloy?: string } }[] }>("/catalog");
  const entry = catalog.destinations.find((d) => d.type === "debug")!;
  expect(entry.runtimes).toEqual(["otelcol"]);
  expect(entry.unavailable?.alloy).toContain("experimental");
  expect(catalog.destinations.find((d) => d.type === "otlp")!.runtimes).toEqual(["otelcol", "alloy"]);

  // The same destination activates on a Runtime O collector, which then cannot become an Alloy one.
  const otelcol = await ok<{ id: string }>("/collectors", "POST", { name: "otelcol-1" });
  const res = await server.api(`/collectors/${otelcol.id}/destinations`, { method: "POST", json: { destinationId: debug.id, configOverrides: {} } });
  expect(res.status).toBe(201);
  const patch = await server.api(`/collectors/${otelcol.id}`, { method: "PATCH", json: { managementMode: "rcfg-remotecfg" } });
  const patchError = ((await patch.json()) as ErrorBody).error;
  expect({ status: patch.status, details: patchError.details }).toEqual({
    status: 400,
    details: [{ path: "managementMode", message: expect.stringContaining('active destination "dbg-r" (debug) cannot run there') }],
  });
  expect((await ok<{ managementMode: string }>(`/collectors/${otelcol.id}`)).managementMode).toBe("opamp");
});

test("on an Alloy collector, a route whose filter reads a field Alloy delivers differently for its source is refused", async () => {
  const destination = await ok<{ id: string }>("/destinations", "POST", { name: "gw", type: "otlphttp", config: { endpoint: "https://gw.example.com" } });
  const syslog = await ok<{ id: string }>("/sources", "POST", { name: "net", type: "syslog", config: {} });
  const pipelineWith = (name: string, condition: string) =>
    ok<{ id: string }>("/pipelines", "POST", {
      name,
      signal: "logs",
      topology: {
        nodes: [
          { id: "in", kind: "source" },
          { id: "f", kind: "processor", processor: { type: "filter", config: { logs: { log_record: [condition] } } } },
          { id: "out", kind: "destination", ref: destination.id },
        ],
        edges: [
          { id: "e1", source: "in", target: "f" },
          { id: "e2", source: "f", target: "out" },
        ],
      },
    });
  const byBody = await pipelineWith("by body", 'IsMatch(body, "healthz")');
  const bySeverity = await pipelineWith("by severity", "severity_number < SEVERITY_NUMBER_WARN");
  const alloy = await ok<{ id: string }>("/collectors", "POST", { name: "alloy-1", managementMode: "rcfg-remotecfg" });
  const otelcol = await ok<{ id: string }>("/collectors", "POST", { name: "otelcol-1" });
  for (const c of [alloy, otelcol]) {
    await ok(`/collectors/${c.id}/sources`, "POST", { sourceId: syslog.id, configOverrides: {} });
    await ok(`/collectors/${c.id}/destinations`, "POST", { destinationId: destination.id, configOverrides: {}, tags: {} });
  }

  const res = await server.api("/routes", { method: "POST", json: { collectorId: alloy.id, sourceId: syslog.id, pipelineId: byBody.id } });
  const error = ((await res.json()) as ErrorBody).error;
  expect({ status: res.status, code: error.code, paths: error.details.map((d) => d.path) }).toEqual({
    status: 400,
    code: "validation_failed",
    paths: ["pipelineId"],
  });
  expect(error.details[0]!.message).toContain(
    'pipeline "by body" at topology.nodes[f].processor.config.logs.log_record[0]: condition "IsMatch(body, \\"healthz\\")" reads body',
  );
  expect(error.details[0]!.message).toContain("on Alloy (remote config)");

  await ok("/routes", "POST", { collectorId: alloy.id, sourceId: syslog.id, pipelineId: bySeverity.id });
  await ok("/routes", "POST", { collectorId: otelcol.id, sourceId: syslog.id, pipelineId: byBody.id });
  expect((await ok<{ items: RouteRecord[] }>(`/routes?collectorId=${alloy.id}`)).items.map((r) => r.pipelineId)).toEqual([bySeverity.id]);

  // Changing the pipeline under an Alloy route to read the body is refused as breaking that route.
  const kept = (await ok<{ items: RouteRecord[] }>(`/routes?collectorId=${alloy.id}`)).items[0]!;
  const graph = await ok<{ nodes: { id: string; processor?: unknown }[] }>(`/pipelines/${bySeverity.id}/topology`);
  graph.nodes.find((n) => n.id === "f")!.processor = { type: "filter", config: { logs: { log_record: ['IsMatch(body, "disk")'] } } };
  const edit = await server.api(`/pipelines/${bySeverity.id}/topology`, { method: "PUT", json: graph });
  const broken = ((await edit.json()) as ErrorBody).error;
  expect({ status: edit.status, code: broken.code, paths: broken.details.map((d) => d.path) }).toEqual({
    status: 409,
    code: "breaks_routes",
    paths: [`routes/${kept.id}`],
  });
  expect(broken.details[0]!.message).toStartWith(
    'on Alloy collector alloy-1, pipeline "by severity" at topology.nodes[f].processor.config.logs.log_record[0]: condition',
  );

  // A collector cannot become an Alloy one while its routes read what Alloy delivers differently; nothing changes.
  const patch = await server.api(`/collectors/${otelcol.id}`, { method: "PATCH", json: { managementMode: "rcfg-remotecfg" } });
  const refused = ((await patch.json()) as ErrorBody).error;
  expect({ status: patch.status, paths: refused.details.map((d) => d.path) }).toEqual({ status: 400, paths: ["managementMode"] });
  expect(refused.details[0]!.message).toContain('condition "IsMatch(body, \\"healthz\\")" reads body');
  expect((await ok<{ managementMode: string }>(`/collectors/${otelcol.id}`)).managementMode).toBe("opamp");
});

test("a Runtime R (Alloy) collector refuses a source Alloy cannot run (k8s_cluster), at activation and at a change of management mode", async () => {
  const cluster = await ok<{ id: string }>("/sources", "POST", { name: "cluster-r", type: "k8s_cluster", config: {} });
  const alloy = await ok<{ id: string }>("/collectors", "POST", { name: "alloy-k8s", managementMode: "rcfg-remotecfg" });
  const activation = await server.api(`/collectors/${alloy.id}/sources`, { method: "POST", json: { sourceId: cluster.id, configOverrides: {} } });
  const activationError = ((await activation.json()) as ErrorBody).error;
  expect({ status: activation.status, paths: activationError.details.map((d) => d.path) }).toEqual({ status: 400, paths: ["sourceId"] });
  expect(activationError.details[0]!.message).toContain('source "cluster-r" (k8s_cluster) cannot run on collector');
  expect(activationError.details[0]!.message).toContain("grafana/alloy has no otelcol.receiver.k8s_cluster");
  expect((await ok<{ items: unknown[] }>(`/collectors/${alloy.id}/sources`)).items).toEqual([]);

  // The catalog says so, for the UI.
  const catalog = await ok<{ sources: { type: string; runtimes: string[]; unavailable?: { alloy?: string } }[] }>("/catalog");
  expect(catalog.sources.find((s) => s.type === "k8s_cluster")!.runtimes).toEqual(["otelcol"]);
  expect(catalog.sources.find((s) => s.type === "kafka")!.runtimes).toEqual(["otelcol", "alloy"]);

  // Active on a Runtime O collector, it keeps that collector from becoming an Alloy one.
  const otelcol = await ok<{ id: string }>("/collectors", "POST", { name: "otelcol-k8s" });
  await ok(`/collectors/${otelcol.id}/sources`, "POST", { sourceId: cluster.id, configOverrides: {} });
  const patch = await server.api(`/collectors/${otelcol.id}`, { method: "PATCH", json: { managementMode: "rcfg-remotecfg" } });
  const patchError = ((await patch.json()) as ErrorBody).error;
  expect({ status: patch.status, details: patchError.details }).toEqual({
    status: 400,
    details: [{ path: "managementMode", message: expect.stringContaining('active source "cluster-r" (k8s_cluster) cannot run there') }],
  });
  expect((await ok<{ managementMode: string }>(`/collectors/${otelcol.id}`)).managementMode).toBe("opamp");
});

test("routing a source whose data differs on Alloy to an Alloy collector succeeds with the difference as a warning; the same route on Runtime O has none", async () => {
  const backend = await ok<{ id: string }>("/destinations", "POST", {
    name: "backend-sys",
    type: "otlphttp",
    config: { endpoint: "https://otlp.example.com" },
  });
  const syslog = await ok<{ id: string }>("/sources", "POST", { name: "sys-in", type: "syslog", config: {} });
  const graph = {
    nodes: [
      { id: "in", kind: "source" },
      { id: "out", kind: "destination", ref: backend.id },
    ],
    edges: [{ id: "e", source: "in", target: "out" }],
  };
  const pipeline = await ok<{ id: string }>("/pipelines", "POST", { name: "syslog out", signal: "logs", topology: graph });
  const written = [];
  for (const managementMode of ["rcfg-remotecfg", "opamp"]) {
    const collector = await ok<{ id: string }>("/collectors", "POST", { name: `sys-${managementMode}`, managementMode });
    await ok(`/collectors/${collector.id}/sources`, "POST", { sourceId: syslog.id, configOverrides: {} });
    await ok(`/collectors/${collector.id}/destinations`, "POST", { destinationId: backend.id, configOverrides: {} });
    written.push(
      await ok<{ differences: { sourceType: string; difference: string }[] }>("/routes", "POST", {
        collectorId: collector.id,
        sourceId: syslog.id,
        pipelineId: pipeline.id,
      }),
    );
  }
  expect(written[0]!.differences).toEqual([
    {
      sourceType: "syslog",
      difference: expect.stringContaining(
        "body is the whole syslog line as received (priority, header and message) on OpenTelemetry Collector (OpAMP) but the message part only on Alloy (remote config)",
      ),
    },
  ]);
  expect(written[1]!.differences).toEqual([]);
});
