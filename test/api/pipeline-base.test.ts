/**
 * PUT /pipelines/{id}/topology?base=<tag>: a save made from an older graph
 * than the stored one is refused with 409 stale_version and changes nothing;
 * without base the save goes through as before.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { topologyTag } from "../../shared/topology-tag.ts";
import type { Topology } from "../../shared/config-records.ts";
import { startTestServer, type TestServer } from "../harness.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

test("a save based on a stale graph is a 409; one based on the stored graph saves", async () => {
  const destination = await server.call<{ id: string }>("/destinations", "POST", { name: "dbg", type: "debug", config: {} });
  const graph = (x: number): Topology => ({
    nodes: [
      { id: "in", kind: "source", position: { x, y: 0 } },
      { id: "out", kind: "destination", ref: destination.id, position: { x: x + 200, y: 0 } },
    ],
    edges: [{ id: "e", source: "in", target: "out" }],
  });
  const pipeline = await server.call<{ id: string; topology: Topology }>("/pipelines", "POST", { name: "shared", signal: "logs", topology: graph(0) });
  const loaded = topologyTag(await server.call<Topology>(`/pipelines/${pipeline.id}/topology`));
  expect(loaded).toBe(topologyTag(pipeline.topology));

  // Someone else saves first.
  const theirs = await server.call<Topology>(`/pipelines/${pipeline.id}/topology`, "PUT", graph(50));
  const res = await server.api(`/pipelines/${pipeline.id}/topology?base=${loaded}`, { method: "PUT", json: graph(100) });
  const body = (await res.json()) as { error: { code: string; message: string } };
  expect({ status: res.status, code: body.error.code }).toEqual({ status: 409, code: "stale_version" });
  expect(body.error.message).toContain("changed by someone else");
  expect(await server.call<Topology>(`/pipelines/${pipeline.id}/topology`)).toEqual(theirs);

  const mine = await server.call<Topology>(`/pipelines/${pipeline.id}/topology?base=${topologyTag(theirs)}`, "PUT", graph(100));
  expect(mine.nodes[0]!.position).toEqual({ x: 100, y: 0 });
});
