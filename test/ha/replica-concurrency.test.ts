/**
 * Two servers on one PostgreSQL database under concurrency (issue 34 item 5),
 * each with its own caches fed by the change feed, as behind a load balancer:
 * a bulk tag edit on A sees every collector B acknowledged before it began; a
 * fleet publish on A succeeds while B creates collectors its pipelines select;
 * 20 concurrent activations on one collector, spread over both, all land
 * without a 409; a table lock that stalls writes makes /readyz answer
 * not-ready, and ready again once it is released. How fast the activations
 * go is bench/activations.ts's to say, not this test's.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { ConfigStore } from "../../server/configstore/configstore.ts";
import { PostgresStore } from "../../server/store/postgres.ts";
import { holdDocsLock, testDatabases, type TestDatabases } from "../../server/store/testdb.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { until } from "../opamp/helpers.ts";
import { bootstrapToken } from "../process/spawn.ts";

let pg: TestDatabases;
let uri: string;
let a: TestServer;
let b: TestServer;

beforeAll(async () => {
  pg = await testDatabases();
  uri = await pg.create("concurrency");
  const env = { SVC_SECRETS_KEY: randomBytes(32).toString("base64"), SVC_BOOTSTRAP_ADMINTOKEN: bootstrapToken() };
  a = await startTestServer(env, () => PostgresStore.open(uri));
  b = await startTestServer(env, () => PostgresStore.open(uri));
}, 60_000);
afterAll(async () => {
  await b?.stop();
  await a?.stop();
  await pg?.dropAll();
}, 60_000);

/** An API call as the admin (A bootstrapped it; B shares the account), its status and parsed answer. */
async function send(server: TestServer, path: string, method = "GET", json?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await server.api(path, { method, json, token: a.adminToken });
  const text = await res.text();
  return { status: res.status, body: text === "" ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

/** An admin call that must succeed; its answer. */
async function call<T = Record<string, unknown>>(server: TestServer, path: string, method = "GET", json?: unknown): Promise<T> {
  const answer = await send(server, path, method, json);
  if (answer.status >= 300) throw new Error(`${method} ${path} → ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body as T;
}

/** A filelog source and a pipeline from it to an OTLP destination, selecting collectors by `matchers`. */
async function matcherPipeline(server: TestServer, name: string, matchers: string[]): Promise<void> {
  const source = await call<{ id: string }>(server, "/sources", "POST", {
    name: `src-${name}`,
    type: "filelog",
    config: { include: [`/var/log/${name}.log`] },
  });
  const destination = await call<{ id: string }>(server, "/destinations", "POST", {
    name: `dst-${name}`,
    type: "otlphttp",
    config: { endpoint: "https://otlp.example.com" },
  });
  const topology = {
    nodes: [
      { id: "in", kind: "source", ref: source.id },
      { id: "out", kind: "destination", ref: destination.id },
    ],
    edges: [{ id: "e1", source: "in", target: "out" }],
  };
  await call(server, "/pipelines", "POST", { name, signal: "logs", topology, matchers });
}

/** Runs `count` calls of `make` with `concurrency` in flight; their results in order. */
async function inFlight<T>(count: number, concurrency: number, make: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        results[i] = await make(i);
      }
    }),
  );
  return results;
}

describe("two replicas on one PostgreSQL database, under concurrency", () => {
  test("a bulk tag edit by matcher on A changes every collector B acknowledged before it began", async () => {
    for (let round = 0; round < 3; round++) {
      const created = await inFlight(100, 10, (i) =>
        call<{ id: string }>(b, "/collectors", "POST", { name: `bulk-${round}-${i}`, tags: { wave: `w${round}` } }),
      );
      const result = await call<{ matched: number; changed: number }>(a, "/collectors/tags", "POST", { match: [`wave=w${round}`], set: { seen: "yes" } });
      expect(result).toMatchObject({ matched: 100, changed: 100 });
      const stored = await a.app.store.getMany<{ tags: Record<string, string> }>(
        "collectors",
        created.map((c) => c.id),
      );
      expect([...stored.values()].filter((doc) => doc.data.tags.seen === "yes")).toHaveLength(100);
    }
  }, 120_000);

  test("fleet publishes on A succeed while B creates collectors its pipelines select", async () => {
    await matcherPipeline(a, "fleet", ["team=fleet"]);
    await call(a, "/commit", "POST", { message: "fleet pipeline" });
    await call(a, "/publish", "POST", {});
    // Each round B is creating collectors the pipeline selects (each then gets its first target there) while A publishes.
    const answers: { status: number; body: Record<string, unknown> }[] = [];
    for (let round = 0; round < 12; round++) {
      const creating = Promise.all(
        Array.from({ length: 5 }, (_, i) => call(b, "/collectors", "POST", { name: `fleet-${round}-${i}`, tags: { team: "fleet" } })),
      );
      await Bun.sleep(round * 5);
      answers.push(await send(a, "/publish", "POST", {}));
      await creating;
    }
    expect(answers.filter((answer) => answer.status >= 300).map((answer) => answer.body)).toEqual([]);
    // Once B stops, one more publish leaves every collector the pipeline selects current at the head commit.
    await call(a, "/publish", "POST", {});
    const fleet = (await a.app.store.list<{ id: string; tags: Record<string, string> }>("collectors"))
      .map((doc) => doc.data)
      .filter((c) => c.tags.team === "fleet");
    expect(fleet.length).toBeGreaterThan(0);
    const head = (await call<{ items: { commit: string }[] }>(a, "/commits")).items[0]!.commit;
    for (const collector of fleet) expect((await a.app.delivery.target(collector.id))?.target.targetCommit).toBe(head);
  }, 120_000);

  test("20 concurrent activations on one collector, over both replicas, all land and none answers 409", async () => {
    const collector = await call<{ id: string }>(a, "/collectors", "POST", { name: "busy" });
    const sources = await inFlight(20, 5, (i) =>
      call<{ id: string }>(a, "/sources", "POST", { name: `many-${i}`, type: "filelog", config: { include: [`/var/log/many-${i}.log`] } }),
    );
    const answers = await Promise.all(
      sources.map((source, i) => send(i % 2 === 0 ? a : b, `/collectors/${collector.id}/sources`, "POST", { sourceId: source.id, configOverrides: {} })),
    );
    expect(answers.filter((answer) => answer.status !== 201).map((answer) => answer.body)).toEqual([]);
    const reader = new ConfigStore(a.app.store, a.app.configStore.repo);
    try {
      const active = (await reader.worktree()).activations.get(collector.id)?.sources.map((s) => s.sourceId) ?? [];
      expect(active.sort()).toEqual(sources.map((s) => s.id).sort());
    } finally {
      reader.close();
    }
  }, 120_000);

  test("a table lock that stalls writes makes /readyz answer not-ready, and ready again once released", async () => {
    const probe = async (server: TestServer) => (await fetch(`${server.base}/readyz`)).status;
    expect(await probe(a)).toBe(200);
    // Reads still work; every write waits.
    const lock = await holdDocsLock(uri);
    try {
      // A write made now waits for the lock; it lands once the lock goes.
      const stalled = send(b, "/collectors", "POST", { name: "while-locked" });
      await until(async () => (await probe(a)) === 503 && (await probe(b)) === 503, 30_000);
      await lock.release();
      expect((await stalled).status).toBe(201);
      await until(async () => (await probe(a)) === 200 && (await probe(b)) === 200, 30_000);
    } finally {
      await lock.release();
    }
  }, 120_000);
});
