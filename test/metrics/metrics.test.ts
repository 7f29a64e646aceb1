/**
 * GET /metrics after real traffic, read by Prometheus' own text parser
 * (test/promtext: github.com/prometheus/common/expfmt): REST calls, an OpAMP
 * WebSocket session, remote-config polls, a refused token; the scope rule on
 * the main listener and the unauthenticated metrics.listen address.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { deploymentKit } from "../deployment.ts";
import { startTestServer, tokenWithScopes, type TestServer } from "../harness.ts";
import { description, RawAgent, until } from "../opamp/helpers.ts";
import { parsePromText, type ParsedFamily, type ParsedMetric } from "../promtext/promtext.ts";
import { remoteConfigClient } from "../remotecfg/client.ts";

let server: TestServer;
let metricsBase: string;

const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);

async function scrapeSeparate(accept?: string): Promise<Response> {
  return fetch(`${metricsBase}/metrics`, accept ? { headers: { Accept: accept } } : {});
}

async function families(): Promise<Map<string, ParsedFamily>> {
  const res = await scrapeSeparate();
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  return new Map(parsePromText(await res.text()).map((f) => [f.name, f]));
}

function series(family: ParsedFamily | undefined, labels: Record<string, string>): ParsedMetric | undefined {
  return family?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels[k] === v));
}

beforeAll(async () => {
  // Port 0: the listener picks a free one; the test reads it back from the app's config below.
  const probe = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
  const port = probe.port;
  await probe.stop();
  server = await startTestServer({ SVC_METRICS_LISTEN: `127.0.0.1:${port}` });
  metricsBase = `http://127.0.0.1:${port}`;
});
afterAll(() => server?.stop());

describe("the separate metrics.listen address", () => {
  test("answers GET /metrics without credentials, and nothing else", async () => {
    const res = await scrapeSeparate();
    expect(res.status).toBe(200);
    expect((await fetch(`${metricsBase}/api/v1/collectors`)).status).toBe(404);
    expect((await fetch(`${metricsBase}/metrics`, { method: "POST" })).status).toBe(405);
  });

  test("OpenMetrics when the Accept header asks for it", async () => {
    const res = await scrapeSeparate("application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5");
    expect(res.headers.get("content-type")).toBe("application/openmetrics-text; version=1.0.0; charset=utf-8");
    const text = await res.text();
    expect(text.endsWith("# EOF\n")).toBe(true);
    // A counter's family is named without _total; its samples keep it.
    expect(text).toContain("# TYPE svc_auth_failures counter");
    expect(text).toMatch(/svc_http_request_duration_seconds_bucket\{[^}]*le="1\.0"\}/);
  });
});

describe("the /metrics request series", () => {
  test("keeps each scrape's method label, on either listener", async () => {
    const head = await fetch(`${metricsBase}/metrics`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect((await fetch(`${server.base}/metrics`)).status).toBe(401);
    const duration = (await families()).get("svc_http_request_duration_seconds")!;
    const scrapes = duration.metrics.filter((m) => m.labels.route === "/metrics");
    // The separate listener's HEAD, and the main listener's refused GET (only it asks for a token).
    expect(series(duration, { route: "/metrics", method: "HEAD", status: "200" })?.count).toBeGreaterThanOrEqual(1);
    expect(series(duration, { route: "/metrics", method: "GET", status: "401" })?.count).toBeGreaterThanOrEqual(1);
    expect(scrapes.every((m) => m.labels.method === "GET" || m.labels.method === "HEAD")).toBe(true);
  });
});

describe("the main listener", () => {
  test("needs a Bearer token with health:read", async () => {
    const url = `${server.base}/metrics`;
    expect((await fetch(url)).status).toBe(401);
    expect((await fetch(url, { headers: { Authorization: "Bearer svcsa_nope0000000000000000000000000000000" } })).status).toBe(401);
    const without = await tokenWithScopes(server, ["collectors:read"]);
    const denied = await fetch(url, { headers: { Authorization: `Bearer ${without}` } });
    expect(denied.status).toBe(403);
    // Refused as an API route's call is: audited as auth.denied, naming the call and the scope.
    const audit = await server.call<{ items: { resourceId: string; outcome: string; details: Record<string, unknown> }[] }>("/audit?action=auth.denied");
    expect(audit.items.find((e) => e.resourceId === "GET /metrics")).toMatchObject({ outcome: "denied", details: { scope: "health:read" } });
    const reader = await tokenWithScopes(server, ["health:read"]);
    const ok = await fetch(url, { headers: { Authorization: `Bearer ${reader}` } });
    expect(ok.status).toBe(200);
    const parsed = parsePromText(await ok.text());
    expect(parsed.map((f) => f.name)).toContain("svc_collectors");
  });
});

describe("after real traffic", () => {
  let collectorId: string;
  let alloyId: string;

  beforeAll(async () => {
    const routeThrough = await deploymentKit(call);
    // REST: creates, a read, a 404 on a templated route.
    collectorId = (await call<{ id: string }>("/collectors", "POST", { name: "otel-1" })).id;
    alloyId = (await call<{ id: string }>("/collectors", "POST", { name: "alloy-1", managementMode: "rcfg-remotecfg" })).id;
    await call(`/collectors/${collectorId}`);
    expect((await server.api("/collectors/00000000-0000-7000-8000-000000000000")).status).toBe(404);
    await routeThrough(alloyId);
    await call("/commit", "POST", { message: "alloy-1" });
    await call("/publish", "POST");
    // A refused enrollment token on the OpAMP channel: an auth failure and an enrollment failure.
    const refused = await fetch(`${server.base}/v1/opamp`, { method: "POST", headers: { Authorization: "Bearer svcen_notavalidtoken000000000000000000000" } });
    expect(refused.status).toBe(401);
  });

  test("families, types, labels and values as Prometheus reads them", async () => {
    // OpAMP: one WebSocket session, two messages.
    const token = (await call<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp", collectorId })).token;
    const agent = await RawAgent.connect(`${server.base.replace(/^http/, "ws")}/v1/opamp`, token);
    try {
      await agent.call({ agentDescription: description({ "service.name": "otel" }) });
      await agent.call({});
      await until(async () => (await server.app.collectors.get(collectorId)).status === "online", 5000);
      // Remote config: two polls.
      const otlp = (await call<{ token: string }>(`/collectors/${alloyId}/otlp-token`, "POST")).token;
      const rcfg = remoteConfigClient(server.base, otlp);
      const first = await rcfg.getConfig({ id: alloyId });
      await rcfg.getConfig({ id: alloyId, hash: first.hash });

      const f = await families();
      expect(f.get("svc_collectors")?.type).toBe("GAUGE");
      expect(series(f.get("svc_collectors"), { status: "online", mode: "opamp" })?.value).toBe(1);
      // Every status and mode is present, zero or not, so a rate or an alert never meets a missing series.
      expect(f.get("svc_collectors")!.metrics).toHaveLength(8);
      expect(series(f.get("svc_collectors"), { status: "offline", mode: "opamp" })?.value).toBe(0);
      const collectorsTotal = f.get("svc_collectors")!.metrics.reduce((sum, m) => sum + m.value!, 0);
      expect(collectorsTotal).toBe(2);

      expect(f.get("svc_channel_sessions")?.type).toBe("GAUGE");
      expect(series(f.get("svc_channel_sessions"), { channel: "opamp" })?.value).toBe(1);
      expect(f.get("svc_channel_messages_total")?.type).toBe("COUNTER");
      expect(series(f.get("svc_channel_messages_total"), { channel: "opamp" })?.value).toBeGreaterThanOrEqual(2);
      expect(series(f.get("svc_channel_requests_total"), { channel: "remotecfg" })?.value).toBe(2);

      const duration = f.get("svc_http_request_duration_seconds")!;
      expect(duration.type).toBe("HISTOGRAM");
      // Labelled by the route's template, never the raw URL.
      const byId = series(duration, { route: "/api/v1/collectors/{id}", method: "GET", status: "200" })!;
      expect(byId.count).toBe(1);
      expect(byId.buckets!.at(-1)).toEqual({ le: "+Inf", count: 1 });
      expect(byId.buckets!.map((b) => b.le)).toEqual([0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, "+Inf"]);
      expect(series(duration, { route: "/api/v1/collectors/{id}", method: "GET", status: "404" })?.count).toBe(1);
      expect(series(duration, { route: "/api/v1/collectors", method: "POST", status: "201" })?.count).toBe(2);
      expect(duration.metrics.some((m) => m.labels.route!.includes(collectorId))).toBe(false);
      expect(series(duration, { route: "/v1/opamp", method: "POST", status: "401" })?.count).toBe(1);

      expect(f.get("svc_store_operations_total")?.type).toBe("COUNTER");
      expect(series(f.get("svc_store_operations_total"), { op: "write" })!.value!).toBeGreaterThan(0);
      expect(series(f.get("svc_store_operations_total"), { op: "get" })!.value!).toBeGreaterThan(0);
      expect(series(f.get("svc_store_errors_total"), { op: "write" })?.value).toBe(0);
      expect(f.get("svc_store_changes_total")!.metrics[0]!.value!).toBeGreaterThan(0);

      expect(series(f.get("svc_auth_failures_total"), { credential: "enrollment" })?.value).toBe(1);
      expect(f.get("svc_enrollment_failures_total")!.metrics[0]!.value).toBe(1);

      expect(f.get("svc_rollout_state")?.type).toBe("GAUGE");
      const states: Record<string, number> = Object.fromEntries(f.get("svc_rollout_state")!.metrics.map((m) => [m.labels.state!, m.value!]));
      expect(Object.values(states).reduce((a, b) => a + b, 0)).toBe(1);
      expect(states.idle).toBe(0);
      const rollout = f.get("svc_rollout_collectors")!;
      expect(rollout.type).toBe("GAUGE");
      expect(series(rollout, { state: "failed" })?.value).toBe(0);
      expect(rollout.metrics.reduce((sum, m) => sum + m.value!, 0)).toBeGreaterThanOrEqual(1);

      expect(series(f.get("svc_build_info"), {})?.value).toBe(1);
      expect(f.get("process_start_time_seconds")!.metrics[0]!.value!).toBeGreaterThan(1.7e9);
    } finally {
      agent.close();
    }
    await until(async () => series((await families()).get("svc_channel_sessions"), { channel: "opamp" })?.value === 0, 5000);
  });
});
