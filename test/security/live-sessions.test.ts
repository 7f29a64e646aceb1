/**
 * The auth matrix's live-session dimension (issue 26, findings 3 and 10):
 * every channel that outlives its request (OpAMP over WebSocket and HTTP,
 * `/v1/agent`, server-sent events on `/api/v1/events` for service accounts
 * and UI sessions) is opened with a valid credential, which is then rotated,
 * revoked, disabled, deleted or let expire while connected. The connection
 * must be closed promptly, receive nothing after (over OpAMP: never the new
 * token), and the stored state must stay as the operator's action left it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { create, toBinary } from "@bufbuild/protobuf";
import { AgentToServerSchema, type ServerToAgent } from "../../server/gen/opamp/v1/opamp_pb.ts";
import { SqliteStore } from "../../server/store/sqlite.ts";
import type { Store } from "../../server/store/store.ts";
import { sseBlocks } from "../client.ts";
import { deploymentKit } from "../deployment.ts";
import { startTestServer, tokenWithScopes, type TestServer } from "../harness.ts";
import { CAPS, description, RawAgent, until, uuidBytes, within } from "../opamp/helpers.ts";

const EXTERNAL = "https://svc.example.com";
/** ReportsOwnMetrics and AcceptsOpAMPConnectionSettings: every offer carries the collector token. */
const TOKEN_CAPS = CAPS | 64n | 256n;
/**
 * Deadline for a session or stream to end once its grant is gone. Not a speed
 * target: what it tells apart is "ended by the revocation" from "left open"
 * (which nothing else would end during the test), so it is generous enough
 * for a busy machine.
 */
const PROMPT_MS = 15_000;

let server: TestServer;
let wsOpamp: string;
let routeThrough: (collectorId: string, include?: string) => Promise<void>;

const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);

beforeAll(async () => {
  server = await startTestServer({ SVC_EXTERNALURL: EXTERNAL });
  wsOpamp = `${server.base.replace(/^http/, "ws")}/v1/opamp`;
  routeThrough = await deploymentKit(call);
});
afterAll(() => server.stop());

/** The bearer values of the OpAMP offers (the collector token) in these messages. */
function offeredControl(messages: ServerToAgent[]): string[] {
  return messages.flatMap((m) => m.connectionSettings?.opamp?.headers?.headers.map((x) => x.value.replace(/^Bearer /, "")) ?? []);
}

/** Every bearer value a ServerToAgent carries in its connection settings. */
function offeredTokens(messages: ServerToAgent[]): string[] {
  return messages.flatMap((m) =>
    [m.connectionSettings?.opamp?.headers, m.connectionSettings?.ownMetrics?.headers].flatMap(
      (h) => h?.headers.map((x) => x.value.replace(/^Bearer /, "")) ?? [],
    ),
  );
}

async function newCollector(name: string): Promise<string> {
  return (await call<{ id: string }>("/collectors", "POST", { name })).id;
}

async function opampEnrollment(extra: Record<string, unknown> = {}): Promise<{ id: string; token: string }> {
  return call<{ id: string; token: string }>("/enrollment-tokens", "POST", { kind: "opamp", ...extra });
}

/** Routes the collector and publishes its config, so a session still open would be sent it. */
async function publish(collectorId: string, include: string): Promise<void> {
  await routeThrough(collectorId, include);
  await call("/commit", "POST", { message: include });
  await call(`/publish/${collectorId}`, "POST");
}

/** The same server, but no watcher hears of any write (a lagging replica's feed): only re-checks on use can notice. */
function deafServer(): Promise<TestServer> {
  return startTestServer({ SVC_EXTERNALURL: EXTERNAL }, (config) => {
    const store = new SqliteStore(config.storage.boltPath);
    return Object.assign(Object.create(store) as Store, { watch: () => () => {} });
  });
}

describe("OpAMP WebSocket sessions end with their credential", () => {
  test("rotating a collector token closes the session opened with the old one and never sends it the new token", async () => {
    const collectorId = await newCollector("leaked");
    const old = (await call<{ token: string }>(`/collectors/${collectorId}/otlp-token`, "POST")).token;
    // The attacker's session with the leaked token, and the operator's legitimate one.
    const attacker = await RawAgent.connect(wsOpamp, old);
    const first = await attacker.call({ capabilities: TOKEN_CAPS, agentDescription: description({ "service.name": "leaked" }) });
    expect(offeredTokens([first])).toContain(old);
    const mark = attacker.received.length;

    const rotated = (await call<{ token: string }>(`/collectors/${collectorId}/otlp-token`, "POST")).token;
    const closed = await attacker.waitClosed(PROMPT_MS);
    expect(closed.code).toBe(1008);
    expect(closed.reason).toContain("revoked");
    expect(offeredTokens(attacker.received.slice(mark))).not.toContain(rotated);
    expect(attacker.received.slice(mark)).toEqual([]);
    // Stored state: the operator's rotation stands, nothing rotated it again.
    expect(await server.app.collectorTokens.current(collectorId)).toBe(rotated);
    expect(await server.app.collectorTokens.verify(old)).toBeNull();
    // And the old token opens nothing any more.
    await expect(RawAgent.connect(wsOpamp, old)).rejects.toThrow();
  });

  test("a session opened with the collector's current token is offered that token only (and the collector's metrics credential), and closed when the collector is deleted", async () => {
    const collectorId = await newCollector("deleted");
    const token = (await call<{ token: string }>(`/collectors/${collectorId}/otlp-token`, "POST")).token;
    const agent = await RawAgent.connect(wsOpamp, token);
    const reply = await agent.call({ capabilities: TOKEN_CAPS, agentDescription: description({ "service.name": "deleted" }) });
    expect(offeredControl([reply])).toEqual([token]);
    const own = reply.connectionSettings!.ownMetrics!.headers!.headers[0]!.value.replace(/^Bearer /, "");
    expect(await server.app.metricsTokens.verify(own)).toBe(collectorId);
    const mark = agent.received.length;
    await call(`/collectors/${collectorId}`, "DELETE");
    expect((await agent.waitClosed(PROMPT_MS)).code).toBe(1008);
    expect(agent.received.slice(mark)).toEqual([]);
  });

  test("revoking the enrollment token closes its session: no config and no newly minted token after", async () => {
    const collectorId = await newCollector("enrolled");
    const enrollment = await opampEnrollment({ collectorId });
    const agent = await RawAgent.connect(wsOpamp, enrollment.token);
    const reply = await agent.call({ capabilities: TOKEN_CAPS, agentDescription: description({ "service.name": "enrolled" }) });
    const offered = offeredTokens([reply]);
    expect(offered.length).toBeGreaterThan(0);
    const mark = agent.received.length;

    await call(`/enrollment-tokens/${enrollment.id}`, "DELETE");
    const closed = await agent.waitClosed(PROMPT_MS);
    expect(closed.code).toBe(1008);
    // Work that would have reached the session: a new config, a rotated token.
    await publish(collectorId, "/var/log/after-revoke/*.log");
    const rotated = (await call<{ token: string }>(`/collectors/${collectorId}/otlp-token`, "POST")).token;
    await Bun.sleep(200);
    expect(agent.received.slice(mark)).toEqual([]);
    expect(offeredTokens(agent.received)).not.toContain(rotated);
    const listed = await call<{ items: { id: string; revokedAt: string | null }[] }>("/enrollment-tokens");
    expect(listed.items.find((t) => t.id === enrollment.id)!.revokedAt).not.toBeNull();
  });

  test("a session opened with a still-valid enrollment token is pushed the rotated token (the enrollment's own channel)", async () => {
    const collectorId = await newCollector("pushed");
    const enrollment = await opampEnrollment({ collectorId });
    const agent = await RawAgent.connect(wsOpamp, enrollment.token);
    try {
      await agent.call({ capabilities: TOKEN_CAPS, agentDescription: description({ "service.name": "pushed" }) });
      const pushed = agent.next((m) => m.connectionSettings !== undefined);
      const rotated = (await call<{ token: string }>(`/collectors/${collectorId}/otlp-token`, "POST")).token;
      expect(offeredTokens([await pushed])).toContain(rotated);
      expect(agent.closed).toBeNull();
    } finally {
      agent.close();
    }
  });

  test("an enrollment token that expires while connected closes its session", async () => {
    const collectorId = await newCollector("expiring");
    const enrollment = await opampEnrollment({ collectorId, expiresIn: 2 });
    const agent = await RawAgent.connect(wsOpamp, enrollment.token);
    await agent.call({ capabilities: TOKEN_CAPS, agentDescription: description({ "service.name": "expiring" }) });
    const mark = agent.received.length;
    const closed = await agent.waitClosed(2000 + PROMPT_MS);
    expect(closed.code).toBe(1008);
    expect(closed.reason).toContain("expired");
    expect(agent.received.slice(mark)).toEqual([]);
  });
});

describe("OpAMP: re-checked on every message, never minted over", () => {
  test("a session on a token sealed before tokens were kept (no plaintext to offer) is offered its own token, not a newly minted one", async () => {
    const collectorId = await newCollector("legacy");
    const token = (await call<{ token: string }>(`/collectors/${collectorId}/otlp-token`, "POST")).token;
    const doc = (await server.app.store.get<{ sealed?: string }>("collector_tokens", collectorId))!;
    const { sealed: _, ...unsealed } = doc.data;
    await server.app.store.write([{ op: "put", collection: "collector_tokens", id: collectorId, data: unsealed, expect: doc.version }]);
    const agent = await RawAgent.connect(wsOpamp, token);
    try {
      const reply = await agent.call({ capabilities: TOKEN_CAPS, agentDescription: description({ "service.name": "legacy" }) });
      expect(offeredControl([reply])).toEqual([token]);
      expect(await server.app.collectorTokens.verify(token)).toBe(collectorId);
      const audit = await call<{ items: { resourceId: string | null }[] }>("/audit?action=collector.token.rotate&limit=1000");
      expect(audit.items.filter((e) => e.resourceId === collectorId)).toHaveLength(1);
    } finally {
      agent.close();
    }
  });

  test("with a change feed that delivers nothing (a lagging replica), the next message finds the credential gone and is not answered", async () => {
    const deaf = await deafServer();
    try {
      const url = `${deaf.base.replace(/^http/, "ws")}/v1/opamp`;
      const { id } = await deaf.call<{ id: string }>("/collectors", "POST", { name: "deaf" });
      const old = (await deaf.call<{ token: string }>(`/collectors/${id}/otlp-token`, "POST")).token;
      const byToken = await RawAgent.connect(url, old);
      await byToken.call({ capabilities: TOKEN_CAPS, agentDescription: description({ "service.name": "deaf" }) });
      const enrollment = await deaf.call<{ id: string; token: string }>("/enrollment-tokens", "POST", { kind: "opamp", collectorId: id });
      const byEnrollment = await RawAgent.connect(url, enrollment.token);
      await byEnrollment.call({ capabilities: CAPS, agentDescription: description({ "service.name": "deaf" }) });
      const marks = [byToken.received.length, byEnrollment.received.length];

      await deaf.call(`/collectors/${id}/otlp-token`, "POST");
      await deaf.call(`/enrollment-tokens/${enrollment.id}`, "DELETE");
      await Bun.sleep(100);
      expect(byToken.closed).toBeNull();
      byToken.send({ capabilities: TOKEN_CAPS });
      byEnrollment.send({});
      expect((await byToken.waitClosed(PROMPT_MS)).code).toBe(1008);
      expect((await byEnrollment.waitClosed(PROMPT_MS)).code).toBe(1008);
      expect(byToken.received.slice(marks[0])).toEqual([]);
      expect(byEnrollment.received.slice(marks[1])).toEqual([]);
    } finally {
      await deaf.stop();
    }
  });
});

describe("OpAMP over HTTP", () => {
  test("a poll with a token rotated away is refused and offered nothing", async () => {
    const collectorId = await newCollector("http-rotated");
    const old = (await call<{ token: string }>(`/collectors/${collectorId}/otlp-token`, "POST")).token;
    const uid = uuidBytes();
    const poll = (token: string) =>
      fetch(`${server.base}/v1/opamp`, {
        method: "POST",
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/x-protobuf" },
        body: toBinary(AgentToServerSchema, create(AgentToServerSchema, { instanceUid: uid, sequenceNum: 1n, capabilities: TOKEN_CAPS })) as Bun.BodyInit,
      });
    expect((await poll(old)).status).toBe(200);
    const rotated = (await call<{ token: string }>(`/collectors/${collectorId}/otlp-token`, "POST")).token;
    const refused = await poll(old);
    expect(refused.status).toBe(401);
    expect(await refused.text()).not.toContain(rotated);
  });
});

/** A host agent's WebSocket with its enrollment token. */
function agentSession(
  token: string,
  agentId: string,
  on: TestServer = server,
): Promise<{ ws: WebSocket; received: string[]; closed: Promise<{ code: number; reason: string }> }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${on.base.replace(/^http/, "ws")}/v1/agent`, {
      headers: { Authorization: `Bearer ${token}`, "X-Svc-Agent-Id": agentId },
    } as unknown as string[]);
    const received: string[] = [];
    const closed = new Promise<{ code: number; reason: string }>((done) => (ws.onclose = (e) => done({ code: e.code, reason: e.reason })));
    const timer = setTimeout(() => (ws.close(), reject(new Error(`agent ${agentId}'s session did not open within ${PROMPT_MS} ms`))), PROMPT_MS);
    ws.onmessage = (e) => received.push(String(e.data));
    ws.onopen = () => (clearTimeout(timer), resolve({ ws, received, closed }));
    ws.onerror = () => (clearTimeout(timer), reject(new Error(`agent ${agentId}'s session was refused`)));
  });
}

/** `promise`, or past PROMPT_MS a failure naming `what`. */
const ended = <T>(promise: Promise<T>, what: string): Promise<T> => within(promise, PROMPT_MS, what);

describe("/v1/agent sessions end with their enrollment token", () => {
  test("revoking the agent's token closes its session; browse is then refused, not relayed", async () => {
    const enrollment = await call<{ id: string; token: string }>("/enrollment-tokens", "POST", { kind: "agent", maxUses: 1 });
    const session = await agentSession(enrollment.token, "live-host");
    await until(async () => session.received.some((m) => m.includes("welcome")));
    await call(`/enrollment-tokens/${enrollment.id}`, "DELETE");
    const closed = await ended(session.closed, "the revoked agent's session to close");
    expect(closed.code).toBe(1008);
    expect(closed.reason).toContain("revoked");
    const mark = session.received.length;
    const browse = await server.api("/agents/live-host/browse?path=/var/log");
    expect(browse.status).toBe(409);
    expect(session.received.slice(mark)).toEqual([]);
  });

  test("with a change feed that delivers nothing, a browse re-checks the token first: refused, the agent is sent nothing and closed", async () => {
    const deaf = await deafServer();
    try {
      const enrollment = await deaf.call<{ id: string; token: string }>("/enrollment-tokens", "POST", { kind: "agent", maxUses: 1 });
      const session = await agentSession(enrollment.token, "deaf-host", deaf);
      await until(async () => session.received.some((m) => m.includes("welcome")));
      await deaf.call(`/enrollment-tokens/${enrollment.id}`, "DELETE");
      const mark = session.received.length;
      const browse = await deaf.api("/agents/deaf-host/browse?path=/var/log");
      expect(browse.status).toBe(409);
      expect((await ended(session.closed, "the deaf server's agent session to close")).code).toBe(1008);
      expect(session.received.slice(mark)).toEqual([]);
    } finally {
      await deaf.stop();
    }
  });
});

/** Reads an SSE stream into `events` (names) and `comments` until it ends. */
function readStream(res: Response) {
  const events: string[] = [];
  const comments: string[] = [];
  const reader = res.body!.getReader();
  const ended = (async () => {
    for await (const block of sseBlocks(reader)) {
      if (block.event) events.push(block.event);
      else comments.push(block.text);
    }
  })();
  return { events, comments, ended, cancel: () => reader.cancel().catch(() => {}) };
}

/** Opens an event stream, proves it delivers, then runs `end` and checks the stream ends and delivers nothing more. */
async function streamEndsWhen(init: RequestInit & { token?: string | null }, end: () => Promise<void>): Promise<void> {
  const res = await server.api("/events", init);
  expect(res.status).toBe(200);
  const stream = readStream(res);
  try {
    await call("/collectors", "POST", { name: `before-${Math.random().toString(36).slice(2)}` });
    await until(async () => stream.events.includes("collector"), PROMPT_MS);
    await end();
    await ended(stream.ended, "the event stream to end");
    const delivered = stream.events.length;
    await call("/collectors", "POST", { name: `after-${Math.random().toString(36).slice(2)}` });
    await Bun.sleep(100);
    expect(stream.events.length).toBe(delivered);
    expect(stream.comments.at(-1)).toStartWith(": ended: ");
  } finally {
    await stream.cancel();
  }
  // Reconnecting with the same credential is refused.
  expect((await server.api("/events", init)).status).toBe(401);
}

/** A UI user of `role`, logged in: its id and cookie. */
async function uiUser(username: string, role: string): Promise<{ id: string; cookie: string }> {
  const invited = await call<{ user: { id: string }; inviteUrl: string }>("/users", "POST", { username, email: `${username}@example.com`, role });
  const res = await fetch(`${server.base}/api/v1/session/invite`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ token: new URL(invited.inviteUrl).searchParams.get("token"), password: `${username}-password-1` }),
  });
  expect(res.status).toBe(200);
  return { id: invited.user.id, cookie: res.headers.get("set-cookie")!.split(";")[0]! };
}

describe("server-sent event streams end with their credential", () => {
  test("deleting the service account ends its stream", async () => {
    const name = "sse-account";
    const token = await tokenWithScopes(server, ["collectors:read"], name);
    const id = (await call<{ items: { id: string; name: string }[] }>("/service-accounts")).items.find((a) => a.name === name)!.id;
    await streamEndsWhen({ token }, async () => void (await call(`/service-accounts/${id}`, "DELETE")));
  });

  test("disabling the user ends their UI session's stream", async () => {
    const user = await uiUser("sse-disabled", "viewer");
    await streamEndsWhen({ token: null, headers: { Cookie: user.cookie } }, async () => void (await call(`/users/${user.id}`, "PATCH", { disabled: true })));
  });

  test("deleting the user ends their UI session's stream", async () => {
    const user = await uiUser("sse-deleted", "viewer");
    await streamEndsWhen({ token: null, headers: { Cookie: user.cookie } }, async () => void (await call(`/users/${user.id}`, "DELETE")));
  });

  test("logging out ends the session's stream", async () => {
    const user = await uiUser("sse-logout", "viewer");
    await streamEndsWhen({ token: null, headers: { Cookie: user.cookie } }, async () => {
      const csrf = await fetch(`${server.base}/api/v1/session`, { headers: { Cookie: user.cookie } }).then((r) => r.json() as Promise<{ csrfToken: string }>);
      const res = await fetch(`${server.base}/api/v1/session`, { method: "DELETE", headers: { Cookie: user.cookie, "X-CSRF-Token": csrf.csrfToken } });
      expect(res.status).toBe(204);
    });
  });

  test("demoting the user ends the stream that was filtered for the old role", async () => {
    const user = await uiUser("sse-demoted", "editor");
    const res = await server.api("/events", { token: null, headers: { Cookie: user.cookie } });
    const stream = readStream(res);
    try {
      await call("/collectors", "POST", { name: "demote-before" });
      await until(async () => stream.events.includes("collector"), PROMPT_MS);
      await call(`/users/${user.id}`, "PATCH", { role: "viewer" });
      await ended(stream.ended, "the demoted user's event stream to end");
      expect(stream.comments.at(-1)).toContain("no longer grants");
      // The stored role is the one the admin set.
      expect((await call<{ role: string }>(`/users/${user.id}`)).role).toBe("viewer");
    } finally {
      await stream.cancel();
    }
  });
});

test("no live registration is left behind once every connection above has closed", async () => {
  await until(async () => server.app.live.size === 0, PROMPT_MS);
});
