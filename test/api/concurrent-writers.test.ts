/**
 * Many writers on one document, over HTTP, on the embedded store and on
 * PostgreSQL with two replicas (each with its own cached working tree, as
 * behind a load balancer). Every write the API acknowledged (2xx) must be
 * in the stored working tree afterwards, and no record may refer to one that
 * is gone: a lost activation, or a source deleted while an activation of it
 * landed, fails here.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ConfigStore } from "../../server/configstore/configstore.ts";
import type { Snapshot } from "../../server/configstore/layout.ts";
import { PostgresStore } from "../../server/store/postgres.ts";
import { testDatabases, type TestDatabases } from "../../server/store/testdb.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { until } from "../opamp/helpers.ts";

const WRITERS = 12;

let pg: TestDatabases;
beforeAll(async () => {
  pg = await testDatabases();
});
afterAll(async () => {
  await pg?.dropAll();
});

interface Deployment {
  /** The servers writers are spread over (one embedded, two PostgreSQL replicas). */
  servers: TestServer[];
  token: string;
}

const backends: [string, () => Promise<Deployment>][] = [
  [
    "embedded (SQLite)",
    async () => {
      const server = await startTestServer();
      return { servers: [server], token: server.adminToken };
    },
  ],
  [
    "external (PostgreSQL), two replicas",
    async () => {
      const uri = await pg.create(`writers_${Math.random().toString(36).slice(2, 8)}`);
      const a = await startTestServer({}, () => PostgresStore.open(uri));
      const b = await startTestServer({}, () => PostgresStore.open(uri));
      return { servers: [a, b], token: a.adminToken };
    },
  ],
];

/** The whole working tree as stored now, read past every replica's cache. */
async function stored(server: TestServer): Promise<Snapshot> {
  const reader = new ConfigStore(server.app.store, server.app.configStore.repo);
  try {
    return await reader.worktree();
  } finally {
    reader.close();
  }
}

/** Every reference in the tree names a record that exists. */
function dangling(tree: Snapshot): string[] {
  const out: string[] = [];
  for (const a of tree.activations.values()) {
    for (const s of a.sources) if (!tree.sources.has(s.sourceId)) out.push(`collector ${a.collectorId} activates missing source ${s.sourceId}`);
    for (const d of a.destinations)
      if (!tree.destinations.has(d.destinationId)) out.push(`collector ${a.collectorId} activates missing destination ${d.destinationId}`);
  }
  for (const r of tree.routes.values()) {
    if (!tree.sources.has(r.sourceId)) out.push(`route ${r.id} reads missing source ${r.sourceId}`);
    if (!tree.pipelines.has(r.pipelineId)) out.push(`route ${r.id} uses missing pipeline ${r.pipelineId}`);
    if (!tree.activations.get(r.collectorId)?.sources.some((s) => s.sourceId === r.sourceId))
      out.push(`route ${r.id} reads a source inactive on ${r.collectorId}`);
  }
  for (const p of tree.pipelines.values()) {
    for (const n of p.topology.nodes) {
      if (n.ref === undefined) continue;
      const exists = n.kind === "source" ? tree.sources.has(n.ref) : tree.destinations.has(n.ref);
      if (!exists) out.push(`pipeline ${p.id} node ${n.id} names missing ${n.kind} ${n.ref}`);
    }
  }
  return out;
}

for (const [name, deploy] of backends) {
  describe(name, () => {
    let d: Deployment;
    beforeAll(async () => {
      d = await deploy();
    });
    afterAll(async () => {
      for (const server of d?.servers ?? []) await server.stop();
    });

    /** Writer `i` calls replica i mod n; answers the status (2xx: acknowledged). */
    const call = async (i: number, path: string, method: string, json?: unknown) => {
      const res = await d.servers[i % d.servers.length]!.api(path, { method, json, token: d.token });
      return { status: res.status, body: res.status === 204 ? null : ((await res.json()) as Record<string, unknown>) };
    };
    const ok = async <T>(path: string, method = "GET", json?: unknown): Promise<T> => {
      const res = await call(0, path, method, json);
      expect(res.status).toBeLessThan(300);
      return res.body as T;
    };
    const source = (n: string) => ok<{ id: string }>("/sources", "POST", { name: n, type: "filelog", config: { include: [`/var/log/${n}.log`] } });

    test(`${WRITERS} writers activating sources on one collector lose no acknowledged activation`, async () => {
      const collector = await ok<{ id: string }>("/collectors", "POST", { name: "busy" });
      const sources = await Promise.all(Array.from({ length: WRITERS }, (_, i) => source(`many-${i}`)));
      const results = await Promise.all(sources.map((s, i) => call(i, `/collectors/${collector.id}/sources`, "POST", { sourceId: s.id, configOverrides: {} })));
      const acknowledged = sources.filter((_, i) => results[i]!.status < 300).map((s) => s.id);
      expect(results.every((r) => r.status < 300 || r.status === 409)).toBe(true);
      expect(acknowledged.length).toBeGreaterThan(0);
      const active = (await stored(d.servers[0]!)).activations.get(collector.id)?.sources.map((s) => s.sourceId) ?? [];
      expect(active.sort()).toEqual(acknowledged.sort());
      // Every replica's API answers that list once its change feed has caught up.
      for (const server of d.servers) {
        await until(async () => {
          const res = await server.api(`/collectors/${collector.id}/sources`, { token: d.token });
          const { items } = (await res.json()) as { items: { sourceId: string }[] };
          return JSON.stringify(items.map((a) => a.sourceId).sort()) === JSON.stringify(acknowledged.slice().sort());
        }, 5000);
      }
    });

    for (const kind of ["source", "destination"] as const) {
      test(`deleting a ${kind} while ${WRITERS} writers activate it leaves no activation of a missing ${kind}`, async () => {
        for (let round = 0; round < 3; round++) {
          const collectors = await Promise.all(
            Array.from({ length: WRITERS }, (_, i) => ok<{ id: string }>("/collectors", "POST", { name: `${kind}-${round}-${i}` })),
          );
          const target =
            kind === "source"
              ? await source(`doomed-${round}`)
              : await ok<{ id: string }>("/destinations", "POST", { name: `doomed-${round}`, type: "debug", config: {} });
          const activations = collectors.map((c, i) => call(i, `/collectors/${c.id}/${kind}s`, "POST", { [`${kind}Id`]: target.id, configOverrides: {} }));
          const removal = call(round + 1, `/${kind}s/${target.id}`, "DELETE");
          const [deleted, ...activated] = await Promise.all([removal, ...activations]);
          const tree = await stored(d.servers[0]!);
          expect(dangling(tree)).toEqual([]);
          const acknowledged = collectors.filter((_, i) => activated[i]!.status < 300).map((c) => c.id);
          const ids = (c: { id: string }) => {
            const a = tree.activations.get(c.id);
            return kind === "source" ? a?.sources.map((s) => s.sourceId) : a?.destinations.map((x) => x.destinationId);
          };
          expect(collectors.filter((c) => ids(c)?.includes(target.id)).map((c) => c.id)).toEqual(acknowledged);
          const exists = kind === "source" ? tree.sources.has(target.id) : tree.destinations.has(target.id);
          if (deleted!.status === 204) {
            expect(exists).toBe(false);
            expect(acknowledged).toEqual([]);
          } else {
            expect(deleted!.status).toBe(409);
            expect(exists).toBe(true);
          }
        }
      });
    }

    test(`${WRITERS} writers routing through a pipeline being deleted leave no route to a missing pipeline`, async () => {
      const collector = await ok<{ id: string }>("/collectors", "POST", { name: "routed" });
      const sources = await Promise.all(Array.from({ length: WRITERS }, (_, i) => source(`routed-${i}`)));
      for (const s of sources) await ok(`/collectors/${collector.id}/sources`, "POST", { sourceId: s.id, configOverrides: {} });
      const destination = await ok<{ id: string }>("/destinations", "POST", { name: "dbg", type: "debug", config: {} });
      const graph = {
        nodes: [
          { id: "in", kind: "source" },
          { id: "out", kind: "destination", ref: destination.id },
        ],
        edges: [{ id: "e", source: "in", target: "out" }],
      };
      const pipeline = await ok<{ id: string }>("/pipelines", "POST", { name: "contested", signal: "logs", topology: graph });
      const routes = sources.map((s, i) => call(i, "/routes", "POST", { collectorId: collector.id, sourceId: s.id, pipelineId: pipeline.id }));
      const removal = call(1, `/pipelines/${pipeline.id}`, "DELETE");
      const [deleted, ...created] = await Promise.all([removal, ...routes]);
      const tree = await stored(d.servers[0]!);
      expect(dangling(tree)).toEqual([]);
      const acknowledged = created.filter((r) => r.status < 300).map((r) => r.body!.id as string);
      expect(
        [...tree.routes.values()]
          .filter((r) => r.pipelineId === pipeline.id)
          .map((r) => r.id)
          .sort(),
      ).toEqual(acknowledged.sort());
      if (deleted!.status === 204) expect(acknowledged).toEqual([]);
      else expect(deleted!.status).toBe(409);
    });
  });
}
