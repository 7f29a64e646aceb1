/**
 * Names, not UUIDs, over HTTP: pending changes and each commit's diff name
 * the record every file holds (a deleted one from the version before), the
 * refusals that point at other records name them while their detail paths
 * stay ids, and audit entries name their target (a deleted one marked so)
 * and the records their details name by id.
 * Real git under the test server (embedded store, bare repository on disk).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../harness.ts";
import type { CommitDiff, FileChange } from "../../shared/changes.ts";
import type { AuditEntry } from "../../shared/audit.ts";
import type { ErrorBody } from "../../server/http/schemas.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

const ok = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);

async function refused(path: string, method: string, status: number, code: string): Promise<ErrorBody["error"]> {
  const res = await server.api(path, { method });
  const body = (await res.json()) as ErrorBody;
  expect({ status: res.status, code: body.error?.code }).toEqual({ status, code });
  return body.error;
}

/** path → [change, kind, name] of each item, for comparing in one look. */
const named = (items: FileChange[]) => Object.fromEntries(items.map((i) => [i.path, [i.change, i.record?.kind, i.record?.name]]));

let f: { source: string; destination: string; pipeline: string; collector: string; route: string };

beforeAll(async () => {
  const destination = await ok<{ id: string }>("/destinations", "POST", { name: "gateway", type: "debug", config: {} });
  const source = await ok<{ id: string }>("/sources", "POST", { name: "nginx logs", type: "filelog", config: { include: ["/var/log/nginx/*.log"] } });
  const topology = {
    nodes: [
      { id: "in", kind: "source" },
      { id: "out", kind: "destination", ref: destination.id },
    ],
    edges: [{ id: "e", source: "in", target: "out" }],
  };
  const pipeline = await ok<{ id: string }>("/pipelines", "POST", { name: "main", signal: "logs", topology });
  const collector = await ok<{ id: string }>("/collectors", "POST", { name: "edge-1" });
  await ok(`/collectors/${collector.id}/sources`, "POST", { sourceId: source.id });
  await ok(`/collectors/${collector.id}/destinations`, "POST", { destinationId: destination.id });
  const route = await ok<{ id: string }>("/routes", "POST", { collectorId: collector.id, sourceId: source.id, pipelineId: pipeline.id });
  f = { source: source.id, destination: destination.id, pipeline: pipeline.id, collector: collector.id, route: route.id };
});

describe("pending changes and commits", () => {
  let first: string;

  test("GET /changes names each file's record", async () => {
    const changes = await ok<{ items: FileChange[] }>("/changes");
    expect(named(changes.items)).toEqual({
      [`collectors/${f.collector}/activations.yaml`]: ["added", "collector", "edge-1"],
      [`destinations/${f.destination}.yaml`]: ["added", "destination", "gateway"],
      [`pipelines/${f.pipeline}.yaml`]: ["added", "pipeline", "main"],
      [`routes/${f.route}.yaml`]: ["added", "route", "nginx logs → main"],
      [`sources/${f.source}.yaml`]: ["added", "source", "nginx logs"],
    });
    expect(changes.items.find((i) => i.record?.kind === "source")!.record!.id).toBe(f.source);
    first = (await ok<{ commit: string }>("/commit", "POST", { message: "nginx to the gateway" })).commit;
  });

  test("GET /commits/{commit} answers the commit, its files by name and its diff against the parent", async () => {
    const diff = await ok<CommitDiff>(`/commits/${first}`);
    expect(diff).toMatchObject({ commit: first, message: "nginx to the gateway", parent: null });
    expect(Object.keys(named(diff.items))).toHaveLength(5);
    expect(named(diff.items)[`sources/${f.source}.yaml`]).toEqual(["added", "source", "nginx logs"]);
    expect(diff.diff).toContain(`+++ b/sources/${f.source}.yaml`);
    expect(diff.diff).toContain("+name: nginx logs");

    // A rename and a route deletion: the diff is against the parent only, the deleted route named as it was.
    await ok(`/sources/${f.source}`, "PUT", { name: "nginx access", type: "filelog", config: { include: ["/var/log/nginx/*.log"] } });
    await ok(`/routes/${f.route}`, "DELETE");
    expect(named((await ok<{ items: FileChange[] }>("/changes")).items)).toEqual({
      [`routes/${f.route}.yaml`]: ["deleted", "route", "nginx logs → main"],
      [`sources/${f.source}.yaml`]: ["modified", "source", "nginx access"],
    });
    const second = (await ok<{ commit: string }>("/commit", "POST", { message: "rename, unroute" })).commit;
    const next = await ok<CommitDiff>(`/commits/${second}`);
    expect(next.parent).toBe(first);
    expect(named(next.items)).toEqual({
      [`routes/${f.route}.yaml`]: ["deleted", "route", "nginx logs → main"],
      [`sources/${f.source}.yaml`]: ["modified", "source", "nginx access"],
    });
    expect(next.diff).toContain("-name: nginx logs\n+name: nginx access");
    expect(next.diff).toContain(`--- a/routes/${f.route}.yaml\n+++ /dev/null`);
    // The route back, for the refusals below.
    f.route = (await ok<{ id: string }>("/routes", "POST", { collectorId: f.collector, sourceId: f.source, pipelineId: f.pipeline })).id;
  });

  test("an unknown commit is 404; so is anything that is not a commit id", async () => {
    await refused(`/commits/${"0".repeat(40)}`, "GET", 404, "not_found");
    await refused("/commits/HEAD", "GET", 404, "not_found");
    const head = (await ok<{ items: { commit: string }[] }>("/commits?limit=1")).items[0]!.commit;
    const tree = (await ok<CommitDiff>(`/commits/${head}`)).commit;
    expect(tree).toBe(head);
  });
});

describe("refusals naming other records", () => {
  test("deleting a source in use names its users; the detail paths stay ids", async () => {
    const error = await refused(`/sources/${f.source}`, "DELETE", 409, "still_referenced");
    expect(error.message).toBe(
      `Source "nginx access" is still used by collector "edge-1", route "nginx access → main" on collector "edge-1"; remove those first.`,
    );
    expect(error.details).toEqual([
      { path: `collectors/${f.collector}`, message: `active on collector "edge-1"` },
      { path: `routes/${f.route}`, message: `route "nginx access → main" on collector "edge-1" reads it` },
    ]);
  });

  test("deleting a destination a pipeline sends to names the pipeline", async () => {
    const error = await refused(`/destinations/${f.destination}`, "DELETE", 409, "still_referenced");
    expect(error.message).toContain(`pipeline "main"`);
    expect(error.details).toContainEqual({ path: `pipelines/${f.pipeline}`, message: `node out of pipeline "main"` });
  });

  test("deleting a routed pipeline, or deactivating a routed source, names the routes", async () => {
    const pipeline = await refused(`/pipelines/${f.pipeline}`, "DELETE", 409, "still_referenced");
    expect(pipeline.message).toStartWith(`Pipeline "main" is still used by 1 route(s)`);
    expect(pipeline.details).toEqual([{ path: `routes/${f.route}`, message: `route "nginx access → main" on collector "edge-1"` }]);
    const deactivate = await refused(`/collectors/${f.collector}/sources/${f.source}`, "DELETE", 409, "still_referenced");
    expect(deactivate.details).toEqual([{ path: `routes/${f.route}`, message: `route "nginx access → main"` }]);
  });

  test("a route of a source not active on the collector names the collector", async () => {
    const other = await ok<{ id: string }>("/collectors", "POST", { name: "edge-2" });
    const res = await server.api("/routes", { method: "POST", json: { collectorId: other.id, sourceId: f.source, pipelineId: f.pipeline } });
    const body = (await res.json()) as ErrorBody;
    expect(res.status).toBe(400);
    expect(body.error.details).toContainEqual({ path: "sourceId", message: `source "nginx access" is not active on collector "edge-2"; activate it first` });
  });
});

describe("audit entries", () => {
  test("name their target; a deleted one is marked, with the name its entry recorded", async () => {
    const doomed = await ok<{ id: string }>("/sources", "POST", { name: "short-lived", type: "filelog", config: { include: ["/var/log/x.log"] } });
    await ok(`/sources/${doomed.id}`, "DELETE");
    const { items } = await ok<{ items: AuditEntry[] }>("/audit?limit=200");
    const target = (action: string, id: string) => items.find((e) => e.action === action && e.resourceId === id)?.target;
    expect(target("source.create", f.source)).toEqual({ name: "nginx access", deleted: false });
    expect(target("pipeline.create", f.pipeline)).toEqual({ name: "main", deleted: false });
    expect(target("collector.create", f.collector)).toEqual({ name: "edge-1", deleted: false });
    expect(target("route.create", f.route)).toEqual({ name: "nginx access → main", deleted: false });
    expect(target("source.create", doomed.id)).toEqual({ name: "short-lived", deleted: true });
    expect(target("source.delete", doomed.id)).toEqual({ name: "short-lived", deleted: true });
    // The route deleted above recorded no name: its id stays, marked deleted.
    expect(items.find((e) => e.action === "route.delete")!.target).toEqual({ name: null, deleted: true });
    // Ids in the details are named too: the activation's source, the route's collector and pipeline.
    const activate = items.find((e) => e.action === "collector.source.activate")!;
    expect(activate.refs).toEqual([{ key: "sourceId", kind: "source", id: f.source, name: "nginx access" }]);
    const routed = items.find((e) => e.action === "route.delete")!;
    expect(routed.refs).toEqual([
      { key: "pipelineId", kind: "pipeline", id: f.pipeline, name: "main" },
      { key: "collectorId", kind: "collector", id: f.collector, name: "edge-1" },
    ]);
    const commit = items.find((e) => e.action === "config.commit")!;
    expect(commit.target).toBeUndefined(); // commits link to their diff, by id
  });
});
