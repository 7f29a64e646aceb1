/**
 * A kafka source over HTTP: its SASL password, nested under `sasl`, is kept
 * in the vault like any sensitive field (a read shows its summary, a preview
 * its marker, never the plaintext), and a preview renders it on both
 * runtimes; a Kubernetes cluster source previews on Runtime O only.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../harness.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

const ok = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);
const PASSWORD = "kafka-pass-5e1d-plaintext";

test("the SASL password is stored as a secret and rendered as its marker on both runtimes", async () => {
  const created = await ok<{ id: string; config: { sasl: { password: unknown } } }>("/sources", "POST", {
    name: "queue",
    type: "kafka",
    config: { brokers: ["kafka:9093"], tls: { enabled: true }, sasl: { username: "svc", password: PASSWORD } },
  });
  const summary = { secret: true, set: true, updatedAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) };
  expect(created.config.sasl.password).toEqual(summary);
  const read = await server.api(`/sources/${created.id}`);
  const text = await read.text();
  expect(text).not.toContain(PASSWORD);
  expect((JSON.parse(text) as { config: { sasl: { password: unknown } } }).config.sasl.password).toEqual(summary);

  const pipeline = await ok<{ id: string }>("/pipelines", "POST", { name: "from kafka", signal: "traces" });
  const graph = {
    nodes: [
      { id: "in", kind: "source", ref: created.id },
      { id: "out", kind: "destination" },
    ],
    edges: [{ id: "e", source: "in", target: "out" }],
  };
  const yaml = await ok<{ config: string }>(`/pipelines/${pipeline.id}/topology/preview`, "POST", graph);
  expect(yaml.config).toContain("kafka/queue:");
  expect(yaml.config).toMatch(/password: "<secret:[0-9a-f-]+>"/);
  const alloy = await ok<{ config: string }>(`/pipelines/${pipeline.id}/topology/preview?runtime=alloy`, "POST", graph);
  expect(alloy.config).toContain('otelcol.receiver.kafka "queue"');
  expect(alloy.config).toMatch(/password\s+= "<secret:[0-9a-f-]+>"/);
  for (const config of [yaml.config, alloy.config]) expect(config).not.toContain(PASSWORD);
});

test("a k8s_cluster source previews on Runtime O; on Runtime R the preview is refused, saying why", async () => {
  const cluster = await ok<{ id: string }>("/sources", "POST", { name: "cluster", type: "k8s_cluster", config: {} });
  const pipeline = await ok<{ id: string }>("/pipelines", "POST", { name: "cluster metrics", signal: "metrics" });
  const graph = {
    nodes: [
      { id: "in", kind: "source", ref: cluster.id },
      { id: "out", kind: "destination" },
    ],
    edges: [{ id: "e", source: "in", target: "out" }],
  };
  expect((await ok<{ config: string }>(`/pipelines/${pipeline.id}/topology/preview`, "POST", graph)).config).toContain("k8s_cluster/cluster:");
  const res = await server.api(`/pipelines/${pipeline.id}/topology/preview?runtime=alloy`, { method: "POST", json: graph });
  const { error } = (await res.json()) as { error: { code: string; details: { path: string; message: string }[] } };
  expect({ status: res.status, code: error.code }).toEqual({ status: 400, code: "validation_failed" });
  expect(error.details[0]!.message).toContain("cannot run on Alloy (remote config): Alloy has no component that collects Kubernetes cluster metrics");
});
