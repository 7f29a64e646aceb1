/**
 * Every in-memory cache fed by the change feed reads again what it cached
 * when the feed resyncs. A real server on a real PostgreSQL; the changes it
 * must pick up are made with plain SQL, which announces nothing (as writes
 * lost while the feed was down), and the resync is real: the feed's own
 * connection is ended with pg_terminate_backend and reconnects by itself.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { SQL } from "bun";
import { hashToken } from "../../server/auth/tokens.ts";
import { PostgresStore } from "../../server/store/postgres.ts";
import { type TestDatabases, testDatabases } from "../../server/store/testdb.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { CAPS, description, RawAgent, until } from "../opamp/helpers.ts";

let dbs: TestDatabases;
let database: string;
let server: TestServer;
/** Plain SQL on the server's database: no NOTIFY, so the server hears nothing of these writes. */
let raw: SQL;
let resyncs = 0;

beforeAll(async () => {
  dbs = await testDatabases();
  const uri = await dbs.create("resync");
  database = new URL(uri).pathname.slice(1);
  server = await startTestServer({}, () => PostgresStore.open(uri));
  raw = new SQL(uri, { max: 1, connection: { application_name: "svc-test-raw" } });
  // Registered after every watcher of the app, so it hears the resync last.
  server.app.store.watch(
    () => {},
    () => resyncs++,
  );
});

afterAll(async () => {
  await raw?.close();
  await server?.stop();
  await dbs?.dropAll();
}, 30_000);

/** Ends the change feed's connection and waits until every watcher has been told to resync. */
async function resync(): Promise<void> {
  const before = resyncs;
  const ended = await dbs.admin`SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
    WHERE datname = ${database} AND application_name = 'svc-server feed'`;
  expect(ended.length).toBe(1);
  await until(async () => resyncs > before, 15_000);
}

async function collectorNames(): Promise<string[]> {
  const page = await server.call<{ items: { name: string }[] }>("/collectors?limit=1000");
  return page.items.map((c) => c.name).sort();
}

/** Puts a document with plain SQL, version bumped, unannounced. */
async function putUnannounced(collection: string, id: string, data: unknown): Promise<void> {
  await raw`INSERT INTO docs (collection, id, version, data, updated_at) VALUES (${collection}, ${id}, 1, ${JSON.stringify(data)}::text::json, now())
    ON CONFLICT (collection, id) DO UPDATE SET version = docs.version + 1, data = EXCLUDED.data, updated_at = now()`;
}

function target(collectorId: string, hash: string, seq: number) {
  return { collectorId, targetHash: hash, targetCommit: "0".repeat(40), targetSeq: seq, state: "outdated", error: null, updatedAt: new Date().toISOString() };
}

async function renderedUnannounced(hash: string, body: string): Promise<void> {
  await putUnannounced("rendered_configs", hash, { hash, runtime: "otelcol", contentType: "text/yaml", body });
}

describe("after the change feed resyncs", () => {
  test("the collectors view reloads: changed, removed and added records", async () => {
    const kept = await server.call<{ id: string }>("/collectors", "POST", { name: "resync-kept" });
    const gone = await server.call<{ id: string }>("/collectors", "POST", { name: "resync-gone" });
    expect(await collectorNames()).toEqual(["resync-gone", "resync-kept"]);
    await raw`UPDATE docs SET version = version + 1, data = (data::jsonb || '{"name": "resync-renamed"}')::json
      WHERE collection = 'collectors' AND id = ${kept.id}`;
    await raw`DELETE FROM docs WHERE collection = 'collectors' AND id = ${gone.id}`;
    await raw`INSERT INTO docs (collection, id, version, data, updated_at)
      SELECT collection, 'zz-from-sql', 1, (data::jsonb || '{"id": "zz-from-sql", "name": "resync-added"}')::json, now()
      FROM docs WHERE collection = 'collectors' AND id = ${kept.id}`;
    // Served from memory: nothing announced, nothing changed yet.
    expect(await collectorNames()).toEqual(["resync-gone", "resync-kept"]);
    await resync();
    await until(async () => (await collectorNames()).join() === "resync-added,resync-renamed");
  }, 30_000);

  test("collector tokens: a digest deleted unannounced stops verifying", async () => {
    const collector = await server.call<{ id: string }>("/collectors", "POST", { name: "resync-token" });
    const { token } = await server.call<{ token: string }>(`/collectors/${collector.id}/otlp-token`, "POST");
    expect(await server.app.collectorTokens.verify(token)).toBe(collector.id);
    await raw`DELETE FROM docs WHERE collection = 'tokens' AND id = ${hashToken(token)}`;
    expect(await server.app.collectorTokens.verify(token)).toBe(collector.id); // cached
    await resync();
    expect(await server.app.collectorTokens.verify(token)).toBeNull();
  }, 30_000);

  test("rollout targets: a target changed unannounced is read again", async () => {
    const collector = await server.call<{ id: string }>("/collectors", "POST", { name: "resync-target" });
    await renderedUnannounced("h1", "one: 1\n");
    await renderedUnannounced("h2", "two: 2\n");
    await putUnannounced("collector_config", collector.id, target(collector.id, "h1", 1));
    expect((await server.app.delivery.target(collector.id))?.rendered.hash).toBe("h1");
    await putUnannounced("collector_config", collector.id, target(collector.id, "h2", 2));
    expect((await server.app.delivery.target(collector.id))?.rendered.hash).toBe("h1"); // cached
    await resync();
    expect((await server.app.delivery.target(collector.id))?.rendered.hash).toBe("h2");
  }, 30_000);

  test("the config store's working tree is read again whole", async () => {
    await server.call("/sources", "POST", { name: "resync-source", type: "journald", config: {} });
    const names = async () => (await server.call<{ items: { name: string }[] }>("/sources")).items.map((s) => s.name);
    expect(await names()).toContain("resync-source");
    const removed = await raw`DELETE FROM docs WHERE collection = 'worktree' AND data::text LIKE '%resync-source%' RETURNING id`;
    expect(removed.length).toBe(1);
    expect(await names()).toContain("resync-source"); // cached
    await resync();
    expect(await names()).not.toContain("resync-source");
  }, 30_000);

  test("live-event clients get a resync event telling them to refetch", async () => {
    const res = await server.api("/events");
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    try {
      await resync();
      let text = "";
      await until(async () => {
        const { value, done } = await reader.read();
        if (done) throw new Error("the event stream ended");
        text += decoder.decode(value, { stream: true });
        return text.includes("event: resync\n");
      });
      expect(text).toContain('data: {"type":"resync"}');
    } finally {
      await reader.cancel().catch(() => {});
    }
  }, 30_000);

  test("OpAMP: a connected collector whose target changed unannounced gets it pushed", async () => {
    const collector = await server.call<{ id: string }>("/collectors", "POST", { name: "resync-opamp" });
    const { token } = await server.call<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp", collectorId: collector.id });
    const agent = await RawAgent.connect(`${server.base.replace(/^http/, "ws")}/v1/opamp`, token);
    try {
      await agent.call({ agentDescription: description({ "service.name": "resync" }), capabilities: CAPS });
      await renderedUnannounced("h3", "three: 3\n");
      await putUnannounced("collector_config", collector.id, target(collector.id, "h3", 1));
      const pushed = agent.next((m) => m.remoteConfig !== undefined, 15_000);
      await resync();
      const message = await pushed;
      expect(new TextDecoder().decode(message.remoteConfig!.config!.configMap[""]!.body)).toBe("three: 3\n");
    } finally {
      agent.close();
    }
  }, 30_000);
});
