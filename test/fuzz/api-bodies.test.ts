/**
 * Schema-aware fuzzing of every REST route that takes a JSON body, against a
 * real in-process server. Bodies come from the route's own request schema in
 * the OpenAPI document, valid-shaped or mutated (arbitraries.ts). Whatever is
 * sent: never a 500, always the shared error shape on a 4xx, and a refused
 * call leaves the store exactly as it was. New routes are fuzzed the moment
 * they are declared.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import { startTestServer, type TestServer } from "../harness.ts";
import { bodyFor, toJsonText, type JsonSchema } from "./arbitraries.ts";
import { ENDS_SINCE } from "../../server/rollout/ends.ts";
import { ROLLOUTS } from "../../server/rollout/records.ts";
import { DELIVERIES, QUEUE } from "../../server/webhooks/webhooks.ts";

/** Runs per route; 24 routes × (this + raw runs) stay well under the time budget. */
const RUNS = 80;
const RAW_RUNS = 30;

let server: TestServer;
let routes: { method: string; path: string; schema: JsonSchema }[];
/** Ids for `{id}` in paths: one real object of each kind, so bodies reach the handlers. */
const ids: Record<string, string> = {};

beforeAll(async () => {
  // The fuzz sends thousands of calls with one token; the rate limit is tested in test/limits.
  server = await startTestServer({
    SVC_EXTERNALURL: "http://127.0.0.1:1",
    SVC_RATELIMIT_API_PERSECOND: "100000",
    SVC_RATELIMIT_API_BURST: "100000",
    SVC_RATELIMIT_AUTHFAILURES_PERSECOND: "100000",
    SVC_RATELIMIT_AUTHFAILURES_BURST: "100000",
    SVC_RATELIMIT_PASSWORDS_PERSECOND: "100000",
    SVC_RATELIMIT_PASSWORDS_BURST: "100000",
    SVC_RATELIMIT_LOGINFAILURES_PERMINUTE: "100000",
    SVC_RATELIMIT_LOGINFAILURES_BURST: "100000",
  });
  const doc = (await (await fetch(`${server.base}/api/v1/openapi.json`)).json()) as {
    paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: JsonSchema }> } }>>;
  };
  routes = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods).flatMap(([method, op]) => {
      const schema = op.requestBody?.content["application/json"]?.schema;
      return schema ? [{ method: method.toUpperCase(), path, schema }] : [];
    }),
  );
  ids.collectors = (await server.call<{ id: string }>("/collectors", "POST", { name: "fuzz-target" })).id;
  ids.sources = (await server.call<{ id: string }>("/sources", "POST", { name: "fuzz-src", type: "filelog", config: { include: ["/var/log/*.log"] } })).id;
  ids.destinations = (await server.call<{ id: string }>("/destinations", "POST", { name: "fuzz-dst", type: "otlp", config: { endpoint: "gw:4317" } })).id;
  const topology = {
    nodes: [
      { id: "in", kind: "source" },
      { id: "out", kind: "destination", ref: ids.destinations },
    ],
    edges: [{ id: "e0", source: "in", target: "out" }],
  };
  ids.pipelines = (await server.call<{ id: string }>("/pipelines", "POST", { name: "fuzz-pipe", signal: "logs", topology })).id;
  await server.call(`/collectors/${ids.collectors}/sources`, "POST", { sourceId: ids.sources });
  ids.routes = (await server.call<{ id: string }>("/routes", "POST", { collectorId: ids.collectors, sourceId: ids.sources, pipelineId: ids.pipelines })).id;
  ids.users = (await server.call<{ id: string }>("/users", "POST", { username: "fuzz-user", email: "fuzz@example.com", role: "viewer" })).id;
});
afterAll(() => server?.stop());

function concrete(path: string): string {
  const collection = path.split("/")[1]!;
  return path.replace("{id}", ids[collection] ?? "0190c3c0-0000-7000-8000-000000000000");
}

/**
 * Everything the store holds that a request writes, as one comparable string. Left out is what
 * background services write on their own time after an earlier, accepted request: a rollout's
 * end (rollout/ends.ts, a second after its collectors settle) and the webhook queue it feeds.
 */
async function snapshot(): Promise<string> {
  const store = server.app.store;
  const parts: string[] = [];
  for (const name of await store.collections()) {
    if (name === QUEUE || name === DELIVERIES) continue;
    const docs = (await store.list<Record<string, unknown>>(name)).filter((doc) => !(name === ENDS_SINCE.collection && doc.id === ENDS_SINCE.id));
    const requestWritten = name === ROLLOUTS ? docs.map(({ data: { ended: _ended, ...data }, id }) => ({ id, data })) : docs;
    parts.push(name, JSON.stringify(requestWritten));
  }
  return parts.join("\n");
}

interface Outcome {
  status: number;
  text: string;
}

async function send(method: string, path: string, body: string): Promise<Outcome> {
  const res = await server.api(path, { method, body, headers: { "Content-Type": "application/json" } });
  return { status: res.status, text: await res.text() };
}

/** The checks every answer must pass; returns a description of the breach, or null. */
function breach(outcome: Outcome): string | null {
  if (outcome.status >= 500) return `status ${outcome.status}: ${outcome.text.slice(0, 300)}`;
  if (outcome.status >= 400) {
    let parsed: { error?: { code?: unknown; message?: unknown; details?: unknown } };
    try {
      parsed = JSON.parse(outcome.text);
    } catch {
      return `a ${outcome.status} without a JSON body: ${outcome.text.slice(0, 200)}`;
    }
    const e = parsed.error;
    if (typeof e?.code !== "string" || typeof e.message !== "string" || e.message === "" || !Array.isArray(e.details)) {
      return `a ${outcome.status} outside the error shape: ${outcome.text.slice(0, 200)}`;
    }
  }
  return null;
}

async function check(method: string, path: string, body: string): Promise<void> {
  const before = await snapshot();
  const outcome = await send(method, path, body);
  const problem = breach(outcome);
  if (problem) throw new Error(`${method} ${path} ${body.slice(0, 300)} → ${problem}`);
  if (outcome.status >= 400 && outcome.status !== 429) {
    const after = await snapshot();
    if (after !== before) throw new Error(`${method} ${path} was refused with ${outcome.status} but the store changed; body ${body.slice(0, 300)}`);
  }
}

test("the document declares the routes with bodies we expect to fuzz", () => {
  const names = routes.map((r) => `${r.method} ${r.path}`);
  for (const expected of ["POST /collectors", "PUT /pipelines/{id}/topology", "POST /pipelines/{id}/dry-run", "POST /service-accounts", "POST /session"]) {
    expect(names).toContain(expected);
  }
});

test("schema-shaped and mutated bodies on every route: never a 500, the error shape on 4xx, nothing stored on refusal", async () => {
  for (const route of routes) {
    await fc.assert(
      fc.asyncProperty(bodyFor(route.schema), async (body) => {
        await check(route.method, concrete(route.path), toJsonText(body));
      }),
      { numRuns: RUNS },
    );
  }
}, 120_000);

test("bodies that are not JSON, or JSON cut short, on every route are 4xx in the error shape", async () => {
  const raw = fc.oneof(
    fc.string({ maxLength: 200 }),
    fc.string({ unit: "binary", maxLength: 200 }),
    fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b).toString("latin1")),
    fc.constantFrom("{", "[", '{"name":', '{"a":1,}', "\u0000", "NaN", "{'a':1}", "[".repeat(100_000), '{"a":'.repeat(50_000)),
  );
  for (const route of routes) {
    await fc.assert(
      fc.asyncProperty(raw, async (body) => {
        await check(route.method, concrete(route.path), body);
      }),
      { numRuns: RAW_RUNS },
    );
  }
}, 120_000);
