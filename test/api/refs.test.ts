/**
 * Names wherever a caller names a collector, source, destination or pipeline
 * (server/refs/refs.ts), over HTTP on a real test server (embedded store, git
 * on disk): for every input that takes one, its id works as before, a unique
 * exact name is read as that record's id, an unknown text is 404 naming it,
 * and a shared name is 409 ambiguous_name with one detail (id and name) per
 * candidate. An id wins over another record's name equal to it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../harness.ts";
import type { ErrorBody } from "../../server/http/schemas.ts";
import type { PublishPlan, Rollout } from "../../shared/rollouts.ts";

let server: TestServer;
const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);
const created = async (path: string, json: unknown) => (await call<{ id: string }>(path, "POST", json)).id;

async function refused(path: string, method: string, json: unknown, status: number, code: string): Promise<ErrorBody["error"]> {
  const res = await server.api(path, { method, json });
  const body = (await res.json()) as ErrorBody;
  expect({ status: res.status, code: body.error?.code }).toEqual({ status, code });
  return body.error;
}

/** The candidates an ambiguous_name refusal lists, each as [path, id, name]. */
const candidates = (error: ErrorBody["error"]) => error.details.map((d) => [d.path, d.id, d.name]);

const f = {
  edge: "",
  twins: [] as string[],
  shadow: "",
  source: "",
  destination: "",
  pipeline: "",
  dupSources: [] as string[],
  dupDestinations: [] as string[],
  dupPipelines: [] as string[],
};
const sorted = (ids: string[]) => [...ids].sort();

beforeAll(async () => {
  server = await startTestServer({ SVC_EXTERNALURL: "https://svc.example.com/" });
  f.destination = await created("/destinations", { name: "gateway", type: "debug", config: {} });
  f.source = await created("/sources", { name: "nginx logs", type: "filelog", config: { include: ["/var/log/nginx/*.log"] } });
  const topology = (ref: string) => ({
    nodes: [
      { id: "in", kind: "source" },
      { id: "out", kind: "destination", ref },
    ],
    edges: [{ id: "e", source: "in", target: "out" }],
  });
  f.pipeline = await created("/pipelines", { name: "main", signal: "logs", topology: topology(f.destination) });
  f.edge = await created("/collectors", { name: "edge-1" });
  f.twins = [await created("/collectors", { name: "twin" }), await created("/collectors", { name: "twin" })];
  // A collector whose name is another collector's id: the id wins.
  f.shadow = await created("/collectors", { name: f.edge });
  for (let i = 0; i < 2; i++) {
    f.dupSources.push(await created("/sources", { name: "dup", type: "filelog", config: { include: [`/var/log/dup${i}.log`] } }));
    f.dupDestinations.push(await created("/destinations", { name: "dup", type: "debug", config: {} }));
    f.dupPipelines.push(await created("/pipelines", { name: "dup", signal: "logs", topology: topology(f.destination) }));
  }
});
afterAll(() => server.stop());

describe("activation bodies", () => {
  test("POST /collectors/{id}/sources: a unique name activates that source; its id as before", async () => {
    const byName = await call<{ sourceId: string }>(`/collectors/${f.edge}/sources`, "POST", { sourceId: "nginx logs" });
    expect(byName.sourceId).toBe(f.source);
    const byId = await call<{ sourceId: string }>(`/collectors/${f.edge}/sources`, "POST", { sourceId: f.source });
    expect(byId.sourceId).toBe(f.source);
    const unknown = await refused(`/collectors/${f.edge}/sources`, "POST", { sourceId: "no such" }, 404, "not_found");
    expect(unknown.message).toContain("'no such'");
    const ambiguous = await refused(`/collectors/${f.edge}/sources`, "POST", { sourceId: "dup" }, 409, "ambiguous_name");
    expect(candidates(ambiguous)).toEqual(sorted(f.dupSources).map((id) => ["sourceId", id, "dup"]));
  });

  test("POST /collectors/{id}/destinations: likewise", async () => {
    expect((await call<{ destinationId: string }>(`/collectors/${f.edge}/destinations`, "POST", { destinationId: "gateway" })).destinationId).toBe(
      f.destination,
    );
    expect((await call<{ destinationId: string }>(`/collectors/${f.edge}/destinations`, "POST", { destinationId: f.destination })).destinationId).toBe(
      f.destination,
    );
    await refused(`/collectors/${f.edge}/destinations`, "POST", { destinationId: "no such" }, 404, "not_found");
    const ambiguous = await refused(`/collectors/${f.edge}/destinations`, "POST", { destinationId: "dup" }, 409, "ambiguous_name");
    expect(candidates(ambiguous)).toEqual(sorted(f.dupDestinations).map((id) => ["destinationId", id, "dup"]));
  });
});

describe("route bodies", () => {
  let route = "";

  test("POST /routes: collector, source and pipeline by name are stored as their ids", async () => {
    const created = await call<{ id: string; collectorId: string; sourceId: string; pipelineId: string }>("/routes", "POST", {
      collectorId: "edge-1",
      sourceId: "nginx logs",
      pipelineId: "main",
    });
    expect(created).toMatchObject({ collectorId: f.edge, sourceId: f.source, pipelineId: f.pipeline });
    route = created.id;
  });

  test("PUT /routes/{id}: by ids as before, and by names", async () => {
    const byIds = await call(`/routes/${route}`, "PUT", { collectorId: f.edge, sourceId: f.source, pipelineId: f.pipeline });
    expect(byIds).toMatchObject({ collectorId: f.edge, sourceId: f.source, pipelineId: f.pipeline });
    const byNames = await call(`/routes/${route}`, "PUT", { collectorId: "edge-1", sourceId: "nginx logs", pipelineId: "main" });
    expect(byNames).toMatchObject({ collectorId: f.edge, sourceId: f.source, pipelineId: f.pipeline });
  });

  test("an unknown or shared name in any of the three is refused, naming its field and the candidates", async () => {
    const body = { collectorId: f.edge, sourceId: f.source, pipelineId: f.pipeline };
    expect((await refused("/routes", "POST", { ...body, pipelineId: "nope" }, 404, "not_found")).message).toContain("'nope'");
    expect((await refused("/routes", "POST", { ...body, collectorId: "nope" }, 404, "not_found")).message).toContain("'nope'");
    const twin = await refused("/routes", "POST", { ...body, collectorId: "twin" }, 409, "ambiguous_name");
    expect(candidates(twin)).toEqual(sorted(f.twins).map((id) => ["collectorId", id, "twin"]));
    const source = await refused(`/routes/${route}`, "PUT", { ...body, sourceId: "dup" }, 409, "ambiguous_name");
    expect(candidates(source)).toEqual(sorted(f.dupSources).map((id) => ["sourceId", id, "dup"]));
    const pipeline = await refused("/routes", "POST", { ...body, pipelineId: "dup" }, 409, "ambiguous_name");
    expect(candidates(pipeline)).toEqual(sorted(f.dupPipelines).map((id) => ["pipelineId", id, "dup"]));
    expect(pipeline.message).toBe('2 pipelines are named "dup"; give the id of the one you mean.');
  });
});

describe("publish", () => {
  beforeAll(async () => {
    await call("/commit", "POST", { message: "names" });
  });

  test("POST /publish/{collectorId}: by a unique name, and by id even where another collector is named by that id", async () => {
    const byName = await call<Rollout>("/publish/edge-1", "POST");
    expect(byName.collectorIds).toEqual([f.edge]);
    const byId = await call<Rollout>(`/publish/${f.edge}`, "POST");
    expect(byId.collectorIds).toEqual([f.edge]);
  });

  test("POST /publish/{collectorId}: unknown is 404 naming it; a shared name is 409 with both twins", async () => {
    expect((await refused("/publish/nobody", "POST", undefined, 404, "not_found")).message).toBe("Collector 'nobody' not found.");
    const error = await refused("/publish/twin", "POST", undefined, 409, "ambiguous_name");
    expect(candidates(error)).toEqual(sorted(f.twins).map((id) => ["collectorId", id, "twin"]));
    expect(error.message).toBe('2 collectors are named "twin"; give the id of the one you mean.');
  });

  test("POST /publish/plan collectorIds: ids and names, in one list", async () => {
    const plan = await call<PublishPlan>("/publish/plan", "POST", { collectorIds: [f.twins[0], "edge-1", f.shadow] });
    const named = [...plan.changes.map((c) => c.collectorId), ...plan.errors.map((e) => e.collectorId)];
    // edge-1 was published above: unchanged; the twin and the shadow have no config yet but render one.
    expect(plan.unchanged + named.length).toBe(3);
    expect(named).not.toContain(f.edge);
    expect(sorted(named)).toEqual(sorted([f.twins[0]!, f.shadow]));
    await refused("/publish/plan", "POST", { collectorIds: ["edge-1", "nobody"] }, 404, "not_found");
    const error = await refused("/publish/plan", "POST", { collectorIds: ["edge-1", "twin"] }, 409, "ambiguous_name");
    expect(candidates(error)).toEqual(sorted(f.twins).map((id) => ["collectorIds[1]", id, "twin"]));
  });

  test("POST /publish collectorIds and a canary's collectorIds take names too", async () => {
    const rollout = await call<Rollout>("/publish", "POST", { collectorIds: ["edge-1", f.twins[1]] });
    expect(sorted(rollout.collectorIds)).toEqual(sorted([f.edge, f.twins[1]!]));
    const canary = await refused("/publish", "POST", { strategy: { batchSize: 1, canary: { collectorIds: ["twin"] } } }, 409, "ambiguous_name");
    expect(candidates(canary)).toEqual(sorted(f.twins).map((id) => ["strategy.canary.collectorIds[0]", id, "twin"]));
    await refused("/publish", "POST", { collectorIds: ["nobody"] }, 404, "not_found");
  });

  test("a collector named like a /publish route is reached by name through collectorIds", async () => {
    const status = await created("/collectors", { name: "status" });
    const rollout = await call<Rollout>("/publish", "POST", { collectorIds: ["status"] });
    expect(rollout.collectorIds).toEqual([status]);
  });
});

describe("enrollment", () => {
  test("POST /collectors/{id}/bootstrap and the install snippet's ?collectorId= take a name", async () => {
    const files = await call<{ runtime: string; files: { content: string }[] }>("/collectors/edge-1/bootstrap", "POST");
    expect(files.runtime).toBe("otelcol");
    const snippet = await call<{ enrollmentTokenId: string }>("/collectors/snippet?collectorId=edge-1", "POST");
    const tokens = await call<{ items: { id: string; collectorId: string | null }[] }>("/enrollment-tokens");
    expect(tokens.items.find((t) => t.id === snippet.enrollmentTokenId)!.collectorId).toBe(f.edge);
    const error = await refused("/collectors/twin/bootstrap", "POST", undefined, 409, "ambiguous_name");
    expect(candidates(error)).toEqual(sorted(f.twins).map((id) => ["id", id, "twin"]));
    await refused("/collectors/snippet?collectorId=nobody", "POST", undefined, 404, "not_found");
  });

  test("POST /enrollment-tokens binds an opamp token to a collector named", async () => {
    const token = await call<{ collectorId: string | null }>("/enrollment-tokens", "POST", { kind: "opamp", collectorId: "edge-1" });
    expect(token.collectorId).toBe(f.edge);
    await refused("/enrollment-tokens", "POST", { kind: "opamp", collectorId: "twin" }, 409, "ambiguous_name");
  });
});
