/**
 * The spec's deployment flow over HTTP, end to end: source, destination,
 * pipeline with the health-check filter, collector, activations, route →
 * pending changes → commit (visible to plain git) → publish → status →
 * a second publish delivers nothing new → rollback → three history entries.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { parse } from "yaml";
import { startTestServer, type TestServer } from "../harness.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

async function call<T = Record<string, unknown>>(path: string, method = "GET", json?: unknown, expected = [200, 201, 202, 204]): Promise<T> {
  const res = await server.api(path, { method, json });
  const text = await res.text();
  if (!expected.includes(res.status)) throw new Error(`${method} ${path} → ${res.status}: ${text}`);
  return (text === "" ? undefined : JSON.parse(text)) as T;
}

function git(...args: string[]): string {
  const result = Bun.spawnSync(["git", "--git-dir", join(server.dir, "config.git"), ...args]);
  if (result.exitCode !== 0) throw new Error(result.stderr.toString());
  return result.stdout.toString();
}

test("create → commit → publish → status → idempotent publish → rollback → history", async () => {
  const source = await call<{ id: string }>("/sources", "POST", { name: "nginx logs", type: "filelog", config: { include: ["/var/log/nginx/*.log"] } });
  const destination = await call<{ id: string }>("/destinations", "POST", {
    name: "backend",
    type: "otlphttp",
    config: { endpoint: "https://otlp.example.com" },
  });
  const { items: templates } = await call<{ items: { id: string; processor: { type: string; config: unknown } }[] }>("/processor-templates");
  const health = templates.find((t) => t.id === "drop-health-check-logs")!;
  const pipeline = await call<{ id: string }>("/pipelines", "POST", {
    name: "web logs",
    signal: "logs",
    topology: {
      nodes: [
        { id: "in", kind: "source" },
        { id: "drop-health", kind: "processor", processor: health.processor },
        { id: "batch", kind: "processor", processor: { type: "batch", config: {} } },
        { id: "out", kind: "destination", ref: destination.id },
      ],
      edges: [
        { id: "e1", source: "in", target: "drop-health" },
        { id: "e2", source: "drop-health", target: "batch" },
        { id: "e3", source: "batch", target: "out" },
      ],
    },
  });
  const collector = await call<{ id: string }>("/collectors", "POST", { name: "web-1", environment: "prod" });
  await call(`/collectors/${collector.id}/sources`, "POST", { sourceId: source.id, configOverrides: {} });
  await call(`/collectors/${collector.id}/destinations`, "POST", { destinationId: destination.id, configOverrides: {}, tags: { tier: "gold" } });
  await call("/routes", "POST", { collectorId: collector.id, sourceId: source.id, pipelineId: pipeline.id });

  const changes = await call<{ items: { path: string; change: string }[]; diff: string }>("/changes");
  expect(changes.items.map((i) => i.path).sort()).toEqual(
    [
      `collectors/${collector.id}/activations.yaml`,
      `destinations/${destination.id}.yaml`,
      `pipelines/${pipeline.id}.yaml`,
      `routes/`,
      `sources/${source.id}.yaml`,
    ]
      .map((p) => (p === "routes/" ? changes.items.find((i) => i.path.startsWith("routes/"))!.path : p))
      .sort(),
  );
  expect(changes.items.every((i) => i.change === "added")).toBe(true);
  expect(changes.diff).toContain("+name: nginx logs");

  expect((await server.api("/publish", { method: "POST" })).status).toBe(409); // nothing committed yet

  const commit = await call<{ commit: string; author: string; files: unknown[] }>("/commit", "POST", { message: "Onboard web-1" });
  expect(commit.author).toBe("sa:admin");
  expect(commit.files).toHaveLength(5);
  expect(git("log", "--format=%H %s", "main").trim()).toBe(`${commit.commit} Onboard web-1`);
  expect((await call<{ items: unknown[] }>("/changes")).items).toEqual([]);

  const first = await call<{ changed: string[]; commit: string }>("/publish", "POST");
  expect(first.changed).toEqual([collector.id]);
  expect(first.commit).toBe(commit.commit);
  const status = await call<{ total: number; counts: Record<string, number>; collectors: { id: string; state: string }[]; state: string }>("/publish/status");
  expect(status.total).toBe(1);
  expect(status.collectors).toEqual([{ id: collector.id, state: "outdated" }]);
  expect(status.counts.outdated).toBe(1);
  expect(status.state).toBe("running");

  const second = await call<{ changed: string[] }>("/publish", "POST");
  expect(second.changed).toEqual([]);

  // A real change gives a second pushed config; rollback returns to the first.
  await call(`/collectors/${collector.id}/sources`, "POST", { sourceId: source.id, configOverrides: { include: ["/srv/nginx/*.log"] } });
  await call("/commit", "POST", { message: "Read nginx logs from /srv" });
  expect((await call<{ changed: string[] }>(`/publish/${collector.id}`, "POST")).changed).toEqual([collector.id]);
  const rollback = await call<{ seq: number; rollbackOf: number }>(`/collectors/${collector.id}/rollback`, "POST");
  expect(rollback).toMatchObject({ seq: 3, rollbackOf: 1 });

  const { items: history } = await call<{ items: { seq: number; hash: string; actor: string; rollbackOf?: number }[] }>(
    `/collectors/${collector.id}/config-history`,
  );
  expect(history.map((h) => h.seq)).toEqual([1, 2, 3]);
  expect(history[2]!.hash).toBe(history[0]!.hash);
  expect(history[1]!.hash).not.toBe(history[0]!.hash);
  expect(history.every((h) => h.actor === "sa:admin")).toBe(true);

  const audit = await call<{ items: { action: string }[] }>("/audit?limit=200");
  const actions = audit.items.map((e) => e.action);
  for (const action of ["config.commit", "config.publish", "config.rollback", "route.create", "pipeline.create"]) expect(actions).toContain(action);
});

test("the rendered Runtime O config of a published collector is valid YAML naming the filter", async () => {
  const { items } = await call<{ items: { id: string }[] }>("/collectors");
  const target = await server.app.delivery.target(items[0]!.id);
  expect(target).not.toBeNull();
  const yaml = parse(target!.rendered.body) as { receivers: object; processors: object; exporters: object; service: { pipelines: object } };
  expect(Object.keys(yaml.receivers).some((k) => k.startsWith("filelog"))).toBe(true);
  expect(Object.keys(yaml.processors).some((k) => k.startsWith("filter"))).toBe(true);
  expect(Object.keys(yaml.exporters).some((k) => k.startsWith("otlphttp"))).toBe(true);
});
