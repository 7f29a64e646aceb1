/**
 * The auth matrix (issue 11): every route of the OpenAPI document and every
 * collector/agent channel, called with no credential, malformed ones, revoked
 * ones, tokens of the wrong kind, another collector's token, a service
 * account missing the route's scope, and web UI sessions without their CSRF
 * token or beyond their role. Each call must be refused with the right
 * status in its protocol's error shape, and each batch must leave the store
 * exactly as it was (every collection's documents, and the audit log apart
 * from the auth-failure entries refusals are meant to add). The routes come
 * from the document, so a new one is in the matrix the moment it is declared.
 */
import { create, toBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ROLES, SCOPES } from "../../server/auth/scopes.ts";
import { GetConfigRequestSchema } from "../../server/gen/collector/v1/collector_pb.ts";
import { AgentToServerSchema, ServerErrorResponseType } from "../../server/gen/opamp/v1/opamp_pb.ts";
import { deploymentKit } from "../deployment.ts";
import { startTestServer, tokenWithScopes, type TestServer } from "../harness.ts";
import { CAPS, description, RawAgent, until, uuidBytes, within } from "../opamp/helpers.ts";
import policy from "./access-policy.json" with { type: "json" };

/** How a refusal must look: the API's error JSON, Connect's, OTLP's google.rpc.Status as JSON, or only a status. */
type Shape = "api" | "connect" | "otlp" | "status";

interface Case {
  name: string;
  send(): Promise<Response>;
  status: number;
  shape: Shape;
  /** The error code in the shape (the API's string code, Connect's code name, OTLP's gRPC number). */
  code?: string | number;
  /** Text the answer must not contain (another collector's config). */
  secret?: string;
}

interface Operation {
  method: string;
  path: string;
  /** The path with its parameters filled by real records' ids. */
  url: string;
  scope: string | null;
  session: boolean;
  /** A GET that mints (x-csrf-required): the session cookie needs X-CSRF-Token as on a write. */
  csrf: boolean;
  body: unknown;
}

interface Session {
  cookie: string;
  csrf: string;
  /** The plain session token, to present where it does not belong. */
  token: string;
}

const CONCURRENCY = 8;
const UPGRADE = { Upgrade: "websocket", Connection: "Upgrade", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version": "13" };
const GET_CONFIG = "/collector.v1.CollectorService/GetConfig";
const REGISTER = "/collector.v1.CollectorService/RegisterCollector";
const UNREGISTER = "/collector.v1.CollectorService/UnregisterCollector";

let server: TestServer;
let operations: Operation[];
/** Collectors X and Y (Runtime R): X has a published config; both have current tokens; X's first token was rotated away. */
const x = { id: "", token: "", rotated: "", metrics: "", metricsRotated: "" };
const y = { id: "", token: "" };
/** The token of a collector deleted since it was minted. */
let orphanToken: string;
const enrollment = { opamp: "", opampRevoked: "", agent: "", agentRevoked: "" };
let revokedAccount: string;
/** Per scope: a service account with every scope but that one. */
const allBut = new Map<string, string>();
let live: Session;
let other: Session;
let ended: Session;
/** A web UI user with the viewer role, logged in. */
let viewer: Session;
const AGENT_ID = "matrix-host";

const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);

/** Logs in (or, with `path` /session/invite, accepts an invite) and answers the session. */
async function login(body: Record<string, string>, path = "/session"): Promise<Session> {
  const res = await fetch(`${server.base}/api/v1${path}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
  if (res.status !== 200) throw new Error(`${path} failed: ${res.status} ${await res.text()}`);
  const cookie = res.headers.get("set-cookie")!.split(";")[0]!;
  return { cookie, csrf: ((await res.json()) as { csrfToken: string }).csrfToken, token: cookie.slice(cookie.indexOf("=") + 1) };
}

/** A minimal body that satisfies the schema's required fields, so a call that got past auth would act. */
function sample(schema: Record<string, any>): unknown {
  if (schema.const !== undefined) return schema.const;
  if (schema.default !== undefined) return schema.default;
  if (schema.enum) return schema.enum[0];
  const union = schema.anyOf ?? schema.oneOf;
  if (union) return sample(union[0]);
  if (schema.allOf) return Object.assign({}, ...schema.allOf.map(sample));
  switch (Array.isArray(schema.type) ? schema.type[0] : schema.type) {
    case "object":
      return Object.fromEntries((schema.required ?? []).map((k: string) => [k, sample(schema.properties?.[k] ?? {})]));
    case "array":
      return Array.from({ length: schema.minItems ?? 0 }, () => sample(schema.items ?? {}));
    case "string":
      return schema.format === "uuid" ? x.id : "matrix".padEnd(schema.minLength ?? 1, "x");
    case "integer":
    case "number":
      return schema.minimum ?? 1;
    case "boolean":
      return false;
    case "null":
      return null;
  }
  return {};
}

/** Real ids for every path parameter, by the collection the path names. */
async function pathIds(): Promise<Record<string, string>> {
  const first = async (path: string) => (await call<{ items: { id: string }[] }>(path)).items[0]!.id;
  const sourceId = await first("/sources");
  const destinationId = await first("/destinations");
  const victim = await server.api("/service-accounts", { method: "POST", json: { name: "matrix-victim", scopes: ["collectors:read"] } });
  return {
    "/collectors": x.id,
    "/enrollment-tokens": (await call<{ items: { id: string; revokedAt: string | null }[] }>("/enrollment-tokens")).items.find((t) => t.revokedAt === null)!.id,
    "/sources": sourceId,
    "/destinations": destinationId,
    "/pipelines": await first("/pipelines"),
    "/routes": await first("/routes"),
    "/service-accounts": ((await victim.json()) as { id: string }).id,
    "/users": await first("/users"),
    "/agents": AGENT_ID,
    "/publish": x.id,
    "/rollouts": await first("/rollouts"),
    "/webhooks": (
      await call<{ id: string }>("/webhooks", "POST", { url: "https://hooks.example.com/matrix", events: ["rollout.failed"], secret: "matrix-secret-0123456" })
    ).id,
    commit: (await call<{ items: { commit: string }[] }>("/commits")).items[0]!.commit,
    sourceId,
    destinationId,
    seq: "1",
  };
}

function fill(path: string, ids: Record<string, string>): string {
  const collection = "/" + path.split("/")[1];
  return path.replaceAll(/\{(\w+)\}/g, (_, name: string) => {
    const id = name === "id" || name === "collectorId" ? ids[collection] : ids[name];
    if (id === undefined) throw new Error(`no real id for {${name}} in ${path}: add one to pathIds()`);
    return encodeURIComponent(id);
  });
}

beforeAll(async () => {
  // The matrix is a deliberate flood of failed authentications from one address; the limiter has its own tests.
  server = await startTestServer({
    SVC_EXTERNALURL: "https://svc.example.com",
    SVC_RATELIMIT_AUTHFAILURES_BURST: "1000000",
    SVC_RATELIMIT_API_BURST: "1000000",
  });
  const routeThrough = await deploymentKit(call);
  x.id = (await call<{ id: string }>("/collectors", "POST", { name: "matrix-x", managementMode: "rcfg-remotecfg" })).id;
  y.id = (await call<{ id: string }>("/collectors", "POST", { name: "matrix-y", managementMode: "rcfg-remotecfg" })).id;
  await routeThrough(x.id);
  await call("/commit", "POST", { message: "matrix" });
  await call("/publish", "POST");
  const mint = async (id: string) => (await call<{ token: string }>(`/collectors/${id}/otlp-token`, "POST")).token;
  x.rotated = await mint(x.id);
  x.token = await mint(x.id);
  const mintMetrics = async (id: string) => (await call<{ token: string }>(`/collectors/${id}/metrics-token`, "POST")).token;
  x.metricsRotated = await mintMetrics(x.id);
  x.metrics = await mintMetrics(x.id);
  y.token = await mint(y.id);
  const doomedCollector = await call<{ id: string }>("/collectors", "POST", { name: "matrix-deleted", managementMode: "rcfg-remotecfg" });
  orphanToken = await mint(doomedCollector.id);
  await call(`/collectors/${doomedCollector.id}`, "DELETE");

  const enroll = (kind: string) => call<{ token: string; id: string }>("/enrollment-tokens", "POST", { kind, maxUses: kind === "agent" ? 1 : undefined });
  const revoked = async (kind: string) => {
    const made = await enroll(kind);
    await call(`/enrollment-tokens/${made.id}`, "DELETE");
    return made.token;
  };
  enrollment.opamp = (await enroll("opamp")).token;
  enrollment.agent = (await enroll("agent")).token;
  enrollment.opampRevoked = await revoked("opamp");
  enrollment.agentRevoked = await revoked("agent");
  // The agent token's one use enrolls AGENT_ID, so /agents/{id} names a real record and the token is spent for new hosts.
  const ws = new WebSocket(`${server.base.replace("http", "ws")}/v1/agent`, {
    headers: { Authorization: `Bearer ${enrollment.agent}`, "X-Svc-Agent-Id": AGENT_ID },
  } as unknown as string[]);
  await within(new Promise((resolve, reject) => ((ws.onopen = resolve), (ws.onerror = reject))), 10_000, `agent ${AGENT_ID}'s session to open`);
  ws.close();
  await until(async () => (await server.app.agents.flush(), (await server.app.agents.get(AGENT_ID)).status === "offline"), 5000);

  const doomed = await server.api("/service-accounts", { method: "POST", json: { name: "matrix-revoked", scopes: [...SCOPES] } });
  const account = (await doomed.json()) as { id: string; token: string };
  await call(`/service-accounts/${account.id}`, "DELETE");
  revokedAccount = account.token;

  const { password } = await server.uiAdmin();
  live = await login({ username: "admin", password });
  other = await login({ username: "admin", password });
  ended = await login({ username: "admin", password });
  const invited = await call<{ inviteUrl: string }>("/users", "POST", { username: "matrix-viewer", email: "viewer@example.com", role: "viewer" });
  viewer = await login({ token: new URL(invited.inviteUrl).searchParams.get("token")!, password: "matrix-viewer-password" }, "/session/invite");
  const logout = await fetch(`${server.base}/api/v1/session`, { method: "DELETE", headers: { Cookie: ended.cookie, "X-CSRF-Token": ended.csrf } });
  if (logout.status !== 204) throw new Error(`logout failed: ${logout.status}`);

  const doc = (await (await fetch(`${server.base}/api/v1/openapi.json`)).json()) as {
    paths: Record<
      string,
      Record<
        string,
        {
          "x-required-scope"?: string;
          "x-csrf-required"?: boolean;
          security: unknown[];
          requestBody?: { content: Record<string, { schema: Record<string, any> }> };
        }
      >
    >;
  };
  const ids = await pathIds();
  operations = Object.entries(doc.paths).flatMap(([path, methods]) =>
    Object.entries(methods)
      // Public calls (log in, redeem a link) look at no credential; route-walk.test.ts pins which they are.
      .filter(([, op]) => op.security.length > 0)
      .map(([method, op]) => ({
        method: method.toUpperCase(),
        path,
        url: fill(path, ids),
        scope: op["x-required-scope"] ?? null,
        session: op["x-required-scope"] === undefined,
        csrf: op["x-csrf-required"] === true,
        body: op.requestBody ? sample(op.requestBody.content["application/json"]!.schema) : undefined,
      })),
  );
  for (const scope of new Set(operations.flatMap((o) => (o.scope ? [o.scope] : [])))) {
    allBut.set(
      scope,
      await tokenWithScopes(
        server,
        SCOPES.filter((s) => s !== scope),
      ),
    );
  }
}, 60_000);
afterAll(() => server.stop());

/** Every document of every collection, and the audit log without auth failures (`auth.denied`, `auth.failure_burst`: refusals are meant to add those). */
async function snapshot() {
  const { store } = server.app;
  const docs: Record<string, unknown[]> = {};
  for (const collection of await store.collections()) docs[collection] = await store.list(collection);
  const audit = (await store.queryAudit({ limit: 1_000_000 })).filter((e) => !e.action.startsWith("auth."));
  return { docs, audit };
}

/** What is wrong with one refusal, or null. */
async function problem(c: Case): Promise<string | null> {
  const res = await c.send();
  const text = await res.text();
  if (res.status !== c.status) return `${c.name}: status ${res.status}, wanted ${c.status}: ${text.slice(0, 200)}`;
  if (c.secret !== undefined && text.includes(c.secret)) return `${c.name}: the answer leaks ${c.secret}`;
  if (c.shape === "status") return null;
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    return `${c.name}: the answer is not JSON: ${text.slice(0, 200)}`;
  }
  const shaped =
    c.shape === "api"
      ? typeof body?.error?.code === "string" && typeof body.error.message === "string" && body.error.message !== "" && Array.isArray(body.error.details)
      : c.shape === "connect"
        ? typeof body?.code === "string" && typeof body.message === "string"
        : typeof body?.code === "number" && typeof body.message === "string";
  if (!shaped) return `${c.name}: not the ${c.shape} error shape: ${text.slice(0, 200)}`;
  const code = c.shape === "api" ? body.error.code : body.code;
  if (c.code !== undefined && code !== c.code) return `${c.name}: code ${code}, wanted ${c.code}`;
  return null;
}

/**
 * Runs the cases with limited concurrency; every one must be refused as
 * described, and the store must not move (`also` runs refusals that are not one request).
 */
async function refuseAll(cases: Case[], also?: () => Promise<void>): Promise<void> {
  expect(cases.length).toBeGreaterThan(0);
  const before = await snapshot();
  await also?.();
  const problems: string[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < cases.length) {
        const found = await problem(cases[next++]!);
        if (found) problems.push(found);
      }
    }),
  );
  expect(problems).toEqual([]);
  expect(await snapshot()).toEqual(before);
}

function rest(op: Operation, headers: Record<string, string>): Promise<Response> {
  const h = new Headers(headers);
  if (op.body !== undefined) h.set("Content-Type", "application/json");
  return fetch(`${server.base}/api/v1${op.url}`, { method: op.method, headers: h, body: op.body === undefined ? undefined : JSON.stringify(op.body) });
}

const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
const cookie = (token: string) => ({ Cookie: `svc_session=${token}` });

/** Credentials no route may accept: labelled headers. */
function invalidCredentials(): [string, Record<string, string>][] {
  const admin = server.adminToken;
  return [
    ["no credential", {}],
    ["Basic", { Authorization: "Basic YWRtaW46YWRtaW4=" }],
    ["empty Bearer", { Authorization: "Bearer " }],
    ["two words", { Authorization: `Bearer ${admin} ${admin}` }],
    ["garbage", bearer("not-a-token")],
    ["unknown svcsa_", bearer("svcsa_" + "0".repeat(43))],
    ["tampered admin token", bearer(admin.slice(0, -1) + (admin.endsWith("A") ? "B" : "A"))],
    ["admin token with a prefix", bearer("x" + admin)],
    ["revoked service account", bearer(revokedAccount)],
    ["opamp enrollment token", bearer(enrollment.opamp)],
    ["agent enrollment token", bearer(enrollment.agent)],
    ["revoked enrollment token", bearer(enrollment.opampRevoked)],
    ["collector token", bearer(x.token)],
    ["rotated collector token", bearer(x.rotated)],
    ["deleted collector's token", bearer(orphanToken)],
    // Accepted by /v1/metrics alone.
    ["metrics credential", bearer(x.metrics)],
    ["rotated metrics credential", bearer(x.metricsRotated)],
    ["session token as Bearer", bearer(live.token)],
    ["garbage cookie", cookie("nope")],
    ["service-account token as cookie", cookie(admin)],
    ["collector token as cookie", cookie(x.token)],
    ["ended session", { Cookie: ended.cookie, "X-CSRF-Token": ended.csrf }],
    // A bad Bearer is refused even beside a good cookie: no falling back to the next credential.
    ["bad Bearer beside a live session", { ...bearer("svcsa_" + "0".repeat(43)), Cookie: live.cookie, "X-CSRF-Token": live.csrf }],
  ];
}

describe("REST routes", () => {
  test("the matrix covers the whole document, with a real id for every parameter", () => {
    expect(operations.length).toBeGreaterThan(70);
    expect(
      operations
        .filter((o) => o.session)
        .map((o) => `${o.method} ${o.path}`)
        .sort(),
    ).toEqual(["DELETE /session", "GET /session"]);
    for (const op of operations) expect(op.url).not.toContain("{");
  });

  test("missing, malformed, revoked and wrong-kind credentials: 401 everywhere, nothing changed", async () => {
    const cases = operations.flatMap((op) =>
      invalidCredentials().map(
        ([label, headers]): Case => ({
          name: `${op.method} ${op.path} with ${label}`,
          send: () => rest(op, headers),
          status: 401,
          shape: "api",
          code: "unauthenticated",
        }),
      ),
    );
    await refuseAll(cases);
  });

  test("a token in the query string is not a credential (EventSource cannot send headers; that is no way in)", async () => {
    const op = operations.find((o) => o.path === "/events")!;
    await refuseAll(
      ["token", "access_token", "authorization"].map((name) => ({
        name: `GET /events?${name}=`,
        send: () => fetch(`${server.base}/api/v1/events?${name}=${server.adminToken}`, { method: op.method }),
        status: 401,
        shape: "api",
        code: "unauthenticated",
      })),
    );
  });

  test("a service account with every scope but the route's: 403 naming the scope, nothing changed", async () => {
    const scoped = operations.filter((o) => o.scope !== null);
    await refuseAll(
      scoped.map((op) => ({
        name: `${op.method} ${op.path} without ${op.scope}`,
        send: () => rest(op, bearer(allBut.get(op.scope!)!)),
        status: 403,
        shape: "api",
        code: "forbidden",
      })),
    );
  });

  test("a body that needs a further scope (the policy's inputScopes), sent without it: 403 naming the scope, nothing changed", async () => {
    expect(policy.inputScopes.length).toBeGreaterThan(0);
    await refuseAll(
      policy.inputScopes.map(({ route, body, scope }) => {
        const op = operations.find((o) => `${o.method} ${o.path}` === route)!;
        return {
          name: `${route} ${JSON.stringify(body)} without ${scope}`,
          send: () => rest({ ...op, body: { ...(op.body as object), ...body } }, bearer(allBut.get(scope)!)),
          status: 403,
          shape: "api",
          code: "forbidden",
        };
      }),
    );
  });

  test("a viewer's session, CSRF token and all, is refused every scope its role lacks: 403, nothing changed", async () => {
    const beyond = operations.filter((o) => o.scope !== null && !(ROLES.viewer as string[]).includes(o.scope));
    expect(beyond.length).toBeGreaterThan(40);
    await refuseAll(
      beyond.map((op) => ({
        name: `${op.method} ${op.path} as a viewer`,
        send: () => rest(op, { Cookie: viewer.cookie, "X-CSRF-Token": viewer.csrf }),
        status: 403,
        shape: "api",
        code: "forbidden",
      })),
    );
  });

  test("an account holding users:admin cannot mint a token stronger than itself: 403, nothing changed", async () => {
    const op = operations.find((o) => o.method === "POST" && o.path === "/service-accounts")!;
    const weak = await tokenWithScopes(server, ["users:admin"]);
    const stronger = { ...op, body: { name: "matrix-escalation", scopes: [...SCOPES] } };
    await refuseAll([
      { name: "POST /service-accounts with every scope", send: () => rest(stronger, bearer(weak)), status: 403, shape: "api", code: "forbidden" },
    ]);
  });

  test("an account holding only users:admin grants no role and touches no holder beyond its scopes (invite, role, reset, disable, delete): 403, nothing changed", async () => {
    const weak = await tokenWithScopes(server, ["users:admin"]);
    const op = (method: string, path: string) => operations.find((o) => o.method === method && o.path === path)!;
    const as = (o: Operation, body: unknown, name: string): Case => ({
      name,
      send: () => rest({ ...o, body }, bearer(weak)),
      status: 403,
      shape: "api",
      code: "forbidden",
    });
    await refuseAll([
      ...["admin", "editor", "viewer"].map((role) =>
        as(op("POST", "/users"), { username: `matrix-${role}`, email: "m@example.com", role }, `POST /users as ${role}`),
      ),
      as(op("PATCH", "/users/{id}"), { role: "admin" }, "PATCH /users/{id} to admin"),
      as(op("PATCH", "/users/{id}"), { disabled: true }, "PATCH /users/{id} disabled"),
      as(op("POST", "/users/{id}/password-reset"), undefined, "POST /users/{id}/password-reset"),
      as(op("DELETE", "/users/{id}"), undefined, "DELETE /users/{id}"),
      as(op("DELETE", "/service-accounts/{id}"), undefined, "DELETE /service-accounts/{id} holding a scope the caller lacks"),
    ]);
  });

  test("session-only calls refuse every service account, the admin's included: 401", async () => {
    await refuseAll(
      operations
        .filter((o) => o.session)
        .map((op) => ({
          name: `${op.method} ${op.path} with the admin token`,
          send: () => rest(op, bearer(server.adminToken)),
          status: 401,
          shape: "api",
          code: "unauthenticated",
        })),
    );
  });

  test("writes (and GETs that mint) with the session cookie but without its CSRF token: 403, nothing changed", async () => {
    const writes = operations.filter((o) => o.method !== "GET" || o.csrf);
    expect(writes.length).toBeGreaterThan(30);
    expect(writes.filter((o) => o.method === "GET").map((o) => o.path)).toEqual(["/collectors/snippet"]);
    const variants: [string, Record<string, string>][] = [
      ["no CSRF token", { Cookie: live.cookie }],
      ["an empty CSRF token", { Cookie: live.cookie, "X-CSRF-Token": "" }],
      ["a wrong CSRF token", { Cookie: live.cookie, "X-CSRF-Token": live.csrf.slice(0, -1) + (live.csrf.endsWith("A") ? "B" : "A") }],
      ["another session's CSRF token", { Cookie: live.cookie, "X-CSRF-Token": other.csrf }],
    ];
    await refuseAll(
      writes.flatMap((op) =>
        variants.map(
          ([label, headers]): Case => ({
            name: `${op.method} ${op.path} with ${label}`,
            send: () => rest(op, headers),
            status: 403,
            shape: "api",
            code: "csrf_failed",
          }),
        ),
      ),
    );
  });

  test("every GET the session cookie may send without a CSRF token changes nothing stored (a cross-site GET mints nothing)", async () => {
    const reads = operations.filter((o) => o.method === "GET" && !o.csrf);
    expect(reads.length).toBeGreaterThan(30);
    // The session's own idle-timeout touch is the one write a read may make; an export is audited as a read.
    const stored = async () => {
      const { docs, audit } = await snapshot();
      const { sessions: _touched, ...rest } = docs;
      return { docs: rest, audit: audit.filter((e) => e.action !== "config.export") };
    };
    const before = await stored();
    const answered: string[] = [];
    for (const op of reads) {
      const res = await fetch(`${server.base}/api/v1${op.url}`, { headers: { Cookie: live.cookie }, signal: AbortSignal.timeout(5000) });
      // Server-sent event streams stay open; their answer is the stream itself.
      if ((res.headers.get("content-type") ?? "").includes("text/event-stream")) await res.body?.cancel();
      else await res.arrayBuffer();
      answered.push(`${op.path} ${res.status}`);
    }
    expect(answered.filter((a) => / (401|403|5\d\d)$/.test(a))).toEqual([]);
    expect(await stored()).toEqual(before);
  });
});

describe("channels", () => {
  /** Credentials no collector channel may accept (no credential at all is its own case). */
  function collectorInvalid(): [string, Record<string, string>][] {
    return invalidCredentials().filter(([label]) => !["collector token", "opamp enrollment token"].includes(label));
  }

  function opampBody(instanceUid = uuidBytes()): Uint8Array<ArrayBuffer> {
    const message = create(AgentToServerSchema, {
      instanceUid,
      sequenceNum: 1n,
      capabilities: CAPS,
      agentDescription: description({ "service.name": "otelcol-contrib", "host.name": "matrix-intruder" }),
    });
    return toBinary(AgentToServerSchema, message) as Uint8Array<ArrayBuffer>;
  }

  test("/v1/opamp, HTTP and WebSocket: 401 for everything but a collector token or a live OpAMP enrollment token", async () => {
    const credentials = collectorInvalid();
    credentials.push(["revoked agent enrollment token", bearer(enrollment.agentRevoked)]);
    const cases = credentials.flatMap(([label, headers]): Case[] => [
      {
        name: `OpAMP POST with ${label}`,
        send: () => fetch(`${server.base}/v1/opamp`, { method: "POST", headers: { ...headers, "Content-Type": "application/x-protobuf" }, body: opampBody() }),
        status: 401,
        shape: "api",
        code: "unauthenticated",
      },
      {
        name: `OpAMP upgrade with ${label}`,
        send: () => fetch(`${server.base}/v1/opamp`, { headers: { ...headers, ...UPGRADE } }),
        status: 401,
        shape: "api",
        code: "unauthenticated",
      },
    ]);
    await refuseAll(cases);
  });

  test("/v1/opamp: collector P's token cannot speak for collector O's instance (403 over HTTP; over WebSocket told UNAVAILABLE and held, nothing offered)", async () => {
    const uid = uuidBytes();
    const enrolled = await fetch(`${server.base}/v1/opamp`, {
      method: "POST",
      headers: { ...bearer((await call<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp" })).token), "Content-Type": "application/x-protobuf" },
      body: opampBody(uid),
    });
    expect(enrolled.status).toBe(200);
    // O's first contact is stored by a coalesced write; it must land before the snapshot.
    const o = (await server.app.store.get<{ collectorId: string }>("opamp_instances", Buffer.from(uid).toString("hex")))!.data.collectorId;
    await until(async () => (await server.app.collectors.get(o)).status === "online", 5000);
    const p = await call<{ id: string }>("/collectors", "POST", { name: "matrix-p" });
    const pToken = (await call<{ token: string }>(`/collectors/${p.id}/otlp-token`, "POST")).token;
    const hijack: Case = {
      name: "OpAMP POST for O's instance with P's token",
      send: () =>
        fetch(`${server.base}/v1/opamp`, { method: "POST", headers: { ...bearer(pToken), "Content-Type": "application/x-protobuf" }, body: opampBody(uid) }),
      status: 403,
      shape: "api",
      code: "permission_denied",
    };
    await refuseAll([hijack], async () => {
      // Refused sessions are held before the close (test/opamp/opamp-go.test.ts), so a client that redials at once does not storm.
      const agent = await RawAgent.connect(`${server.base.replace("http", "ws")}/v1/opamp`, pToken, uid);
      const reply = await agent.call({ agentDescription: description({ "service.name": "otelcol-contrib" }) });
      expect(reply.errorResponse?.type).toBe(ServerErrorResponseType.ServerErrorResponseType_Unavailable);
      expect({ config: reply.remoteConfig, settings: reply.connectionSettings }).toEqual({ config: undefined, settings: undefined });
      agent.close();
      await agent.waitClosed();
    });
  });

  test("remote config: 401 unauthenticated for everything but a collector token, on both codecs and every method", async () => {
    const credentials = collectorInvalid();
    credentials.push(["opamp enrollment token", bearer(enrollment.opamp)]);
    const cases = credentials.flatMap(([label, headers]) => remoteConfigCalls(x.id, headers, label, 401, "unauthenticated"));
    await refuseAll(cases);
  });

  test("remote config: collector Y's token cannot read or write collector X (403 permission_denied, nothing changed)", async () => {
    const cases = remoteConfigCalls(x.id, bearer(y.token), "Y's token", 403, "permission_denied");
    for (const c of cases) c.secret = "/var/log/app";
    await refuseAll(cases);
  });

  test("/v1/metrics: 401 in OTLP's Status shape for everything but a collector token or metrics credential", async () => {
    const credentials = collectorInvalid().filter(([label]) => label !== "metrics credential");
    credentials.push(["opamp enrollment token", bearer(enrollment.opamp)]);
    await refuseAll(
      credentials.flatMap(([label, headers]): Case[] => [
        {
          name: `metrics JSON with ${label}`,
          send: () => metricsPost(headers, "application/json", JSON.stringify(metricsRequest({}))),
          status: 401,
          shape: "otlp",
          code: 16,
        },
        {
          name: `metrics protobuf with ${label}`,
          send: () => metricsPost(headers, "application/x-protobuf", new Uint8Array()),
          status: 401,
          shape: "status",
        },
      ]),
    );
  });

  test("/v1/metrics: Y's token naming collector X in its attributes counts for Y, never for X", async () => {
    const throughput = (id: string) => call(`/collectors/${id}/throughput`);
    const before = await throughput(x.id);
    const attrs = { "service.instance.id": x.id, "collector.id": x.id, receiver: "otlp" };
    for (const seconds of [10, 20]) {
      const body = JSON.stringify(metricsRequest(attrs, seconds, { "service.instance.id": x.id, "svc.collector.id": x.id }));
      const res = await metricsPost(bearer(y.token), "application/json", body);
      expect(res.status).toBe(200);
    }
    expect(await throughput(x.id)).toEqual(before);
    expect(JSON.stringify(await throughput(y.id))).toContain("otlp");
  });

  test("/v1/agent: the upgrade is refused with 401 for everything but a live agent enrollment token", async () => {
    const credentials = invalidCredentials().filter(([label]) => label !== "agent enrollment token");
    credentials.push(["revoked agent enrollment token", bearer(enrollment.agentRevoked)]);
    const cases = credentials.flatMap(([label, headers]) =>
      [AGENT_ID, "matrix-new-host"].map(
        (agentId): Case => ({
          name: `agent upgrade as ${agentId} with ${label}`,
          send: () => fetch(`${server.base}/v1/agent`, { headers: { ...headers, ...UPGRADE, "X-Svc-Agent-Id": agentId } }),
          status: 401,
          shape: "api",
          code: "unauthenticated",
        }),
      ),
    );
    cases.push({
      name: "agent upgrade of a new host with a spent agent token",
      send: () => fetch(`${server.base}/v1/agent`, { headers: { ...bearer(enrollment.agent), ...UPGRADE, "X-Svc-Agent-Id": "matrix-new-host" } }),
      status: 401,
      shape: "api",
      code: "unauthenticated",
    });
    await refuseAll(cases);
  });

  test("/v1/bootstrap: 401 for everything but a live enrollment or collector token", async () => {
    const credentials = invalidCredentials().filter(([label]) => !["collector token", "opamp enrollment token", "agent enrollment token"].includes(label));
    credentials.push(["revoked agent enrollment token", bearer(enrollment.agentRevoked)]);
    await refuseAll(
      credentials.map(([label, headers]) => ({
        name: `bootstrap with ${label}`,
        send: () => fetch(`${server.base}/v1/bootstrap?file=config.alloy`, { headers }),
        status: 401,
        shape: "api",
        code: "unauthenticated",
      })),
    );
  });

  test("the same calls with the right credential get in (the refusals above were about the credential)", async () => {
    const rc = await fetch(`${server.base}${GET_CONFIG}`, {
      method: "POST",
      headers: { ...bearer(x.token), "Content-Type": "application/json" },
      body: JSON.stringify({ id: x.id }),
    });
    expect(rc.status).toBe(200);
    expect(((await rc.json()) as { content: string }).content).toContain("/var/log/app");
    const metrics = await metricsPost(bearer(x.token), "application/json", JSON.stringify(metricsRequest({ receiver: "otlp" })));
    expect(metrics.status).toBe(200);
    const ownMetrics = await metricsPost(bearer(x.metrics), "application/json", JSON.stringify(metricsRequest({ receiver: "otlp" })));
    expect(ownMetrics.status).toBe(200);
    const opamp = await fetch(`${server.base}/v1/opamp`, {
      method: "POST",
      headers: { ...bearer(enrollment.opamp), "Content-Type": "application/x-protobuf" },
      body: opampBody(),
    });
    expect(opamp.status).toBe(200);
    const boot = await fetch(`${server.base}/v1/bootstrap?file=config.alloy`, { headers: bearer(x.token) });
    expect(boot.status).not.toBe(401);
    const me = await fetch(`${server.base}/api/v1/session`, { headers: { Cookie: live.cookie } });
    expect(me.status).toBe(200);
  });
});

function remoteConfigCalls(id: string, headers: Record<string, string>, label: string, status: number, code: string): Case[] {
  const json = (path: string, body: unknown): Case => ({
    name: `${path.split("/").pop()} (JSON) for ${id === x.id ? "X" : id} with ${label}`,
    send: () => fetch(`${server.base}${path}`, { method: "POST", headers: { ...headers, "Content-Type": "application/json" }, body: JSON.stringify(body) }),
    status,
    shape: "connect",
    code,
  });
  return [
    json(GET_CONFIG, { id }),
    json(GET_CONFIG, { id, remoteConfigStatus: { status: "REMOTE_CONFIG_STATUSES_FAILED", errorMessage: "intruder" }, hash: "x" }),
    json(REGISTER, { id, name: "intruder", attributes: { evil: "yes" } }),
    json(UNREGISTER, { id }),
    {
      name: `GetConfig (binary poll) for X with ${label}`,
      send: () =>
        fetch(`${server.base}${GET_CONFIG}`, {
          method: "POST",
          headers: { ...headers, "Content-Type": "application/proto" },
          body: toBinary(GetConfigRequestSchema, create(GetConfigRequestSchema, { id })) as Uint8Array<ArrayBuffer>,
        }),
      status,
      shape: "connect",
      code,
    },
  ];
}

function metricsPost(headers: Record<string, string>, contentType: string, body: Bun.BodyInit): Promise<Response> {
  return fetch(`${server.base}/v1/metrics`, { method: "POST", headers: { ...headers, "Content-Type": contentType }, body });
}

/** One cumulative receiver counter as OTLP JSON. */
function metricsRequest(attributes: Record<string, string>, seconds = 10, resource: Record<string, string> = {}) {
  const kv = (o: Record<string, string>) => Object.entries(o).map(([key, v]) => ({ key, value: { stringValue: v } }));
  return {
    resourceMetrics: [
      {
        resource: { attributes: kv(resource) },
        scopeMetrics: [
          {
            metrics: [
              {
                name: "otelcol_receiver_accepted_spans",
                sum: {
                  aggregationTemporality: 2,
                  isMonotonic: true,
                  dataPoints: [
                    {
                      attributes: kv(attributes),
                      startTimeUnixNano: "1000000000",
                      timeUnixNano: String(BigInt(seconds) * 1_000_000_000n),
                      asDouble: seconds * 100,
                    },
                  ],
                },
              },
            ],
          },
        ],
      },
    ],
  };
}
