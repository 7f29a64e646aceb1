/**
 * Bad inputs the fuzzers in this folder found, kept as plain cases so they
 * stay fixed whatever seeds the fuzzers draw next time.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { create, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import type { AnyValueSchema } from "../../server/gen/opamp/v1/anyvalue_pb.ts";
import { AgentToServerSchema } from "../../server/gen/opamp/v1/opamp_pb.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { uuidBytes } from "../opamp/helpers.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

async function post(path: string, body: string): Promise<{ status: number; error: { code: string; message: string } }> {
  const res = await server.api(path, { method: "POST", body, headers: { "Content-Type": "application/json" } });
  return { status: res.status, ...((await res.json()) as { error: { code: string; message: string } }) };
}

test("a component config nested 100,000 deep is a 400 naming the limit, not a 500 from a stack overflow", async () => {
  const config = '{"a":'.repeat(100_000) + "1" + "}".repeat(100_000);
  const answer = await post("/sources", `{"name":"deep","type":"filelog","config":${config}}`);
  expect(answer.status).toBe(400);
  expect(answer.error.code).toBe("too_deeply_nested");
  expect(answer.error.message).toContain("1000 levels");
  expect((await server.call<{ items: unknown[] }>("/sources")).items).toEqual([]);
});

test("nesting up to the limit is still read (OTLP values nest 100 deep, about 400 levels of JSON)", async () => {
  const config = '{"a":'.repeat(999) + "1" + "}".repeat(999);
  const answer = await post("/sources", `{"name":"deep","type":"filelog","config":${config}}`);
  expect(answer.status).toBe(400);
  expect(answer.error.code).toBe("validation_failed");
});

test("a body refused for its size closes the connection, so the unread upload cannot hold it (or a graceful stop) open", async () => {
  const pipeline = await server.call<{ id: string }>("/pipelines", "POST", { name: "big", signal: "logs" });
  const res = await server.api(`/pipelines/${pipeline.id}/topology`, {
    method: "PUT",
    body: "x".repeat(2 * 1024 * 1024),
    headers: { "Content-Type": "application/json" },
  });
  expect(res.status).toBe(413);
  expect(res.headers.get("connection")).toBe("close");
  expect(((await res.json()) as { error: { code: string } }).error.code).toBe("payload_too_large");
});

test("every collector channel refuses input nested deeper than its decoder's limit (400), as REST does; the server answers on", async () => {
  // OpAMP (protobuf): an attribute value of kvlists nested 2,000 deep.
  let value: MessageInitShape<typeof AnyValueSchema> = { value: { case: "stringValue", value: "bottom" } };
  for (let i = 0; i < 2000; i++) value = { value: { case: "kvlistValue", value: { values: [{ key: "k", value }] } } };
  const message = create(AgentToServerSchema, {
    instanceUid: uuidBytes(),
    sequenceNum: 1n,
    agentDescription: { identifyingAttributes: [{ key: "deep", value }] },
  });
  const enrollment = await server.call<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp" });
  const opamp = await fetch(`${server.base}/v1/opamp`, {
    method: "POST",
    headers: { Authorization: `Bearer ${enrollment.token}`, "Content-Type": "application/x-protobuf" },
    body: toBinary(AgentToServerSchema, message) as Uint8Array<ArrayBuffer>,
  });
  expect(opamp.status).toBe(400);

  // Own metrics (OTLP JSON): a resource attribute nested 50,000 deep.
  const collector = await server.call<{ id: string }>("/collectors", "POST", { name: "deep-metrics" });
  const { token } = await server.call<{ token: string }>(`/collectors/${collector.id}/otlp-token`, "POST");
  const deep = '{"kvlistValue":{"values":[{"key":"k","value":'.repeat(50_000) + '{"stringValue":"x"}' + "}]}}".repeat(50_000);
  const metrics = await fetch(`${server.base}/v1/metrics`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: `{"resourceMetrics":[{"resource":{"attributes":[{"key":"deep","value":${deep}}]},"scopeMetrics":[]}]}`,
  });
  expect(metrics.status).toBe(400);
  expect((await fetch(`${server.base}/healthz`)).status).toBe(200);
  expect((await server.call<{ items: unknown[] }>("/collectors")).items).toHaveLength(1);
});
