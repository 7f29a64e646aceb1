/**
 * The live-session dimension across replicas (issue 26, findings 3 and 10):
 * two servers on one PostgreSQL database; a credential rotated, revoked or
 * deleted through replica A ends the sessions and streams held open on
 * replica B, through the store's change feed, and B sends nothing after.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { PostgresStore } from "../../server/store/postgres.ts";
import { testDatabases, type TestDatabases } from "../../server/store/testdb.ts";
import { startTestServer, tokenWithScopes, type TestServer } from "../harness.ts";
import { CAPS, description, RawAgent, until } from "../opamp/helpers.ts";
import { bootstrapToken } from "../process/spawn.ts";

const PROMPT_MS = 5000;
let pg: TestDatabases;
let a: TestServer;
let b: TestServer;

beforeAll(async () => {
  pg = await testDatabases();
  const uri = await pg.create("live");
  const env = { SVC_SECRETS_KEY: randomBytes(32).toString("base64"), SVC_BOOTSTRAP_ADMINTOKEN: bootstrapToken(), SVC_EXTERNALURL: "https://svc.example.com" };
  a = await startTestServer(env, () => PostgresStore.open(uri));
  b = await startTestServer(env, () => PostgresStore.open(uri));
});
afterAll(async () => {
  await b?.stop();
  await a?.stop();
  await pg?.dropAll();
});

test("a collector token rotated on A closes the session opened with the old token on B, which is never sent the new one", async () => {
  const { id } = await a.call<{ id: string }>("/collectors", "POST", { name: "cross" });
  const old = (await a.call<{ token: string }>(`/collectors/${id}/otlp-token`, "POST")).token;
  const agent = await RawAgent.connect(`${b.base.replace(/^http/, "ws")}/v1/opamp`, old);
  await agent.call({ capabilities: CAPS | 64n | 256n, agentDescription: description({ "service.name": "cross" }) });
  const mark = agent.received.length;
  const rotated = (await a.call<{ token: string }>(`/collectors/${id}/otlp-token`, "POST")).token;
  expect((await agent.waitClosed(PROMPT_MS)).code).toBe(1008);
  expect(agent.received.slice(mark)).toEqual([]);
  expect(await b.app.collectorTokens.current(id)).toBe(rotated);
});

test("an enrollment token revoked on A closes its OpAMP session on B", async () => {
  const { id } = await a.call<{ id: string }>("/collectors", "POST", { name: "cross-enrolled" });
  const enrollment = await a.call<{ id: string; token: string }>("/enrollment-tokens", "POST", { kind: "opamp", collectorId: id });
  const agent = await RawAgent.connect(`${b.base.replace(/^http/, "ws")}/v1/opamp`, enrollment.token);
  await agent.call({ capabilities: CAPS | 64n | 256n, agentDescription: description({ "service.name": "cross-enrolled" }) });
  const mark = agent.received.length;
  await a.call(`/enrollment-tokens/${enrollment.id}`, "DELETE");
  expect((await agent.waitClosed(PROMPT_MS)).code).toBe(1008);
  await a.call(`/collectors/${id}/otlp-token`, "POST");
  await Bun.sleep(200);
  expect(agent.received.slice(mark)).toEqual([]);
});

test("a service account deleted on A ends its event stream on B", async () => {
  const token = await tokenWithScopes(a, ["collectors:read"], "cross-sse");
  const accountId = (await a.call<{ items: { id: string; name: string }[] }>("/service-accounts")).items.find((x) => x.name === "cross-sse")!.id;
  const res = await b.api("/events", { token });
  expect(res.status).toBe(200);
  const reader = res.body!.getReader();
  let text = "";
  const ended = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      text += new TextDecoder().decode(value);
    }
  })();
  await a.call("/collectors", "POST", { name: "cross-before" });
  await until(async () => text.includes("cross-before"), PROMPT_MS);
  await a.call(`/service-accounts/${accountId}`, "DELETE");
  await Promise.race([ended, Bun.sleep(PROMPT_MS).then(() => Promise.reject(new Error("stream still open")))]);
  await a.call("/collectors", "POST", { name: "cross-after" });
  await Bun.sleep(200);
  expect(text).not.toContain("cross-after");
  expect(text).toContain(": ended: ");
});
