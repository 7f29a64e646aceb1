/**
 * The OpAMP channel against what opamp-go's client does, read in
 * open-telemetry/opamp-go at HEAD 42e6aa1e and tag v0.23.0 (f68db345):
 * - client/wsclient.go runUntilStopped/ensureConnected: after a session ends
 *   the next connect sequence starts with no wait; only failed dials back
 *   off (exponential, or a longer Retry-After on a 429/503 upgrade answer).
 * - client/internal/receivedprocessor.go: a ServerErrorResponse only reaches
 *   the OnError callback (no backoff); ReportFullState makes the next message
 *   carry description, health and RemoteConfigStatus.
 * - client/internal/nextmessage.go PopPending: the message after a send, and
 *   so the first one on a redial, has only instance_uid, sequence_num and
 *   capabilities.
 * - client/wsclient.go Start: EnableCompression sets gorilla/websocket's
 *   dialer, which offers no-context-takeover permessage-deflate and refuses
 *   an answer without both parameters (gorilla/websocket client.go).
 * - client/internal/httpsender.go: 429/503 are retried after Retry-After,
 *   other statuses (401) are not; answers are read through Go's transport,
 *   which asks for gzip by itself (HEAD also inflates Content-Encoding: gzip).
 * And a collector run without the supervisor has no AcceptsRemoteConfig.
 * Real loopback sockets, real protobuf; a cloned image's refused token is
 * presented by real opamp-go clients (test/peers/opampclient), the cases
 * below it by raw agents, which send what they assert on byte by byte.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { request } from "node:http";
import { gunzipSync } from "node:zlib";
import {
  AgentCapabilities,
  AgentToServerSchema,
  RemoteConfigStatusSchema,
  RemoteConfigStatuses,
  ServerToAgentSchema,
} from "../../server/gen/opamp/v1/opamp_pb.ts";
import { OpampChannel } from "../../server/opamp/channel.ts";
import { deploymentKit } from "../deployment.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { applied, CAPS, deflateExchange, description, RawAgent, until, uuidBytes } from "./helpers.ts";
import { OpampGo, opampUrls, TRANSPORTS } from "./opamp-go.ts";

const HOLD_SECONDS = 2;
let server: TestServer;
let wsUrl: string;
let channel: OpampChannel;
let routeThrough: (collectorId: string, include?: string) => Promise<void>;
let go: OpampGo;

const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);
type Status = { state: string; counts: Record<string, number>; collectors: { id: string; state: string }[] };

beforeAll(async () => {
  server = await startTestServer({ SVC_EXTERNALURL: "https://svc.example.com" });
  // The served channel, with a hold short enough to measure in a test.
  const index = server.app.channels.findIndex((c) => c.name === "opamp");
  server.app.channels[index]!.stop?.();
  channel = new OpampChannel(server.app, { refusedHoldSeconds: HOLD_SECONDS });
  channel.start();
  server.app.channels[index] = channel;
  wsUrl = `${server.base.replace(/^http/, "ws")}/v1/opamp`;
  routeThrough = await deploymentKit(call);
  go = new OpampGo();
});
afterAll(async () => {
  await go.close();
  await server.stop();
});

async function publishedCollector(name: string): Promise<{ id: string; token: string; hash: string }> {
  const collector = await call<{ id: string }>("/collectors", "POST", { name });
  await routeThrough(collector.id, `/var/log/${name}/*.log`);
  await call("/commit", "POST", { message: name });
  await call(`/publish/${collector.id}`, "POST");
  const { token } = await server.app.collectorTokens.mint({ actor: "test", remoteAddr: null }, collector.id);
  return { id: collector.id, token, hash: (await server.app.delivery.target(collector.id))!.rendered.hash };
}

describe.each(TRANSPORTS)("a bound enrollment token presented by another instance (a cloned VM image), from opamp-go over %s", (transport) => {
  test("is refused without a storm (over WebSocket one session per hold time, over HTTP at its polling interval), and the bound instance is unaffected", async () => {
    const url = opampUrls(server.base)[transport];
    const token = (await call<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp" })).token;
    const name = `original-${transport}`;
    const owner = await go.agent({ url, token, description: { identifying: { "host.name": name } }, heartbeatSeconds: 1 });
    await owner.waitFor((e) => e.event === "message", "the owner's first answer", 15_000);

    const started = Date.now();
    const imposter = await go.agent({ url, token, description: { identifying: { "host.name": name } }, heartbeatSeconds: 1 });
    if (transport === "ws") {
      await imposter.waitFor(() => imposter.count((e) => e.event === "connected") >= 3, "the imposter's third session", 30_000);
      // opamp-go redials the moment a session ends (before the fix, ~1,000 sessions within a second). Each session is
      // held for the hold time before its close, so the third opens two holds after the first at the earliest: a lower
      // bound the server's own timer sets.
      expect(Date.now() - started).toBeGreaterThanOrEqual(2 * HOLD_SECONDS * 1000);
      const error = await imposter.waitFor((e) => e.event === "error", "the imposter's ServerErrorResponse");
      expect(error.errorType).toBe("ServerErrorResponseType_Unavailable");
      expect(error.error).toContain("bound to another instance");
      expect(error.retryAfterNs).toBe(HOLD_SECONDS * 1e9);
      expect(channel.heldCount).toBeLessThanOrEqual(1);
    } else {
      // 401: opamp-go does not retry it (client/internal/httpsender.go attemptRequest) and asks again at its next poll.
      await imposter.waitFor(() => imposter.count((e) => /invalid response from server: 401/.test(e.error ?? "")) >= 3, "the imposter's third 401", 30_000);
      expect(imposter.count((e) => e.event === "message")).toBe(0);
    }
    await imposter.stop();
    await until(async () => channel.heldCount === 0, 3 * HOLD_SECONDS * 1000);

    // The owner goes on, and its token still opens new sessions for it.
    const from = owner.mark();
    await owner.restart();
    await owner.waitFor(() => owner.count((e) => e.event === "message", from) >= 2, "2 answers to the restarted owner", 15_000, from);
    expect(owner.count((e) => e.event === "error")).toBe(0);
    const { items } = await call<{ items: { name: string }[] }>(`/collectors?q=${name}`);
    expect(items).toHaveLength(1);
    await owner.stop();
  }, 60_000);
});

// Raw agents: the close code and the Retry-After header are what is asserted, and opamp-go exposes neither.
describe("a bound enrollment token presented by another instance, at the protocol's edge", () => {
  test("past maxHeldSessions a refused session is closed at once, and over HTTP the 401 says when to retry", async () => {
    const token = (await call<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp" })).token;
    const owner = await RawAgent.connect(wsUrl, token);
    await owner.call({ agentDescription: description({ "host.name": "owner-2" }) });
    const index = server.app.channels.indexOf(channel);
    const strict = new OpampChannel(server.app, { refusedHoldSeconds: HOLD_SECONDS, maxHeldSessions: 0 });
    strict.start();
    server.app.channels[index] = strict;
    try {
      const imposter = await RawAgent.connect(wsUrl, token);
      imposter.send();
      expect((await imposter.waitClosed(20_000)).code).toBe(1008);
      // Closed at once, not held: a held session is first told UNAVAILABLE with RetryInfo, and is counted as held.
      expect(imposter.received).toEqual([]);
      expect(strict.heldCount).toBe(0);
    } finally {
      server.app.channels[index] = channel;
      strict.stop();
      owner.close();
    }
    const body = toBinary(AgentToServerSchema, create(AgentToServerSchema, { instanceUid: uuidBytes(), sequenceNum: 1n, capabilities: CAPS }));
    const res = await fetch(`${server.base}/v1/opamp`, {
      method: "POST",
      body: body as Bun.BodyInit,
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/x-protobuf" },
    });
    expect(res.status).toBe(401);
    expect(res.headers.get("retry-after")).toBe(String(HOLD_SECONDS));
  });
});

describe("an agent that resumes without remote_config_status", () => {
  test("a new session is asked for full state; its target is re-sent unless the report says it runs it", async () => {
    const { token, hash } = await publishedCollector("resumer");
    const first = await RawAgent.connect(wsUrl, token);
    const got = await first.call({ agentDescription: description({ "host.name": "resumer" }) });
    expect(Buffer.from(got.remoteConfig!.configHash).toString("hex")).toBe(hash);
    await first.call({ remoteConfigStatus: applied(got.remoteConfig!.configHash) });
    first.close();
    await first.waitClosed();

    // opamp-go's first message on a redial: instance_uid, the next sequence_num, capabilities; nothing else.
    const second = await RawAgent.connect(wsUrl, token, first.uid);
    second.seq = first.seq;
    const asked = await second.call();
    expect(asked.flags & 1n).toBe(1n);
    expect(asked.remoteConfig).toBeUndefined();
    // Its full report says it runs the target: nothing is sent.
    const reported = await second.call({ agentDescription: description({ "host.name": "resumer" }), remoteConfigStatus: applied(Buffer.from(hash, "hex")) });
    expect(reported.remoteConfig).toBeUndefined();
    second.close();
    await second.waitClosed();

    // Its full report has no status (it lost its state): the target is sent again, though status still says current.
    const third = await RawAgent.connect(wsUrl, token, first.uid);
    third.seq = second.seq;
    expect((await third.call()).flags & 1n).toBe(1n);
    const resent = await third.call({ agentDescription: description({ "host.name": "resumer" }) });
    expect(Buffer.from(resent.remoteConfig!.configHash).toString("hex")).toBe(hash);
    third.close();
  });

  test("a fresh client's UNSET status with no hash says nothing of its config: the target is sent again", async () => {
    // Found with opamp-go HEAD against a live server: a client started anew reports
    // RemoteConfigStatus{UNSET, empty hash} in its first full message, and got nothing.
    const { token, hash } = await publishedCollector("fresh-start");
    const first = await RawAgent.connect(wsUrl, token);
    const got = await first.call({ agentDescription: description({ "host.name": "fresh-start" }) });
    await first.call({ remoteConfigStatus: applied(got.remoteConfig!.configHash) });
    first.close();
    await first.waitClosed();

    const restarted = await RawAgent.connect(wsUrl, token, first.uid);
    const unset = create(RemoteConfigStatusSchema, { status: RemoteConfigStatuses.RemoteConfigStatuses_UNSET, lastRemoteConfigHash: new Uint8Array() });
    const resent = await restarted.call({ agentDescription: description({ "host.name": "fresh-start" }), remoteConfigStatus: unset });
    expect(Buffer.from(resent.remoteConfig!.configHash).toString("hex")).toBe(hash);
    restarted.close();
  });

  test("an HTTP exchange after a gap is asked for full state, and re-sent the target when the report has no status", async () => {
    const { token, hash } = await publishedCollector("http-resumer");
    const uid = uuidBytes();
    const poll = async (fields: Record<string, unknown>) => {
      const body = toBinary(AgentToServerSchema, create(AgentToServerSchema, { instanceUid: uid, capabilities: CAPS, ...fields }));
      const res = await fetch(`${server.base}/v1/opamp`, {
        method: "POST",
        body: body as Bun.BodyInit,
        headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/x-protobuf" },
      });
      return fromBinary(ServerToAgentSchema, new Uint8Array(await res.arrayBuffer()));
    };
    const got = await poll({ sequenceNum: 1n, agentDescription: description({ "host.name": "h" }) });
    await poll({ sequenceNum: 2n, remoteConfigStatus: applied(got.remoteConfig!.configHash) });
    expect((await poll({ sequenceNum: 3n })).remoteConfig).toBeUndefined();
    const gap = await poll({ sequenceNum: 9n });
    expect(gap.flags & 1n).toBe(1n);
    const resent = await poll({ sequenceNum: 10n, agentDescription: description({ "host.name": "h" }) });
    expect(Buffer.from(resent.remoteConfig!.configHash).toString("hex")).toBe(hash);
  });
});

describe("the version a collector reports", () => {
  test("follows its full descriptions, so an upgraded collector is rendered with its version's names", async () => {
    const { id, token } = await publishedCollector("upgraded");
    // Kept among its reported attributes (a fact, never a tag: docs/architecture.md "Trust model").
    const version = async () => (await call<{ reported?: Record<string, string> }>(`/collectors/${id}`)).reported?.["service.version"];
    const agent = await RawAgent.connect(wsUrl, token);
    await agent.call({ agentDescription: description({ "host.name": "upgraded", "service.version": "0.140.0" }) });
    await until(async () => (await version()) === "0.140.0");
    await agent.call({ agentDescription: description({ "host.name": "upgraded", "service.version": "0.150.0" }) });
    await until(async () => (await version()) === "0.150.0");
    await call(`/publish/${id}`, "POST");
    const body = (await server.app.delivery.target(id))!.rendered.body;
    expect(body).toContain("otlp_http/");
    agent.close();
  });
});

describe("compression opamp-go asks for", () => {
  test("WebSocket: permessage-deflate is negotiated with gorilla's offer and a config frame arrives deflated", async () => {
    const { token, hash } = await publishedCollector("deflate");
    const first = toBinary(
      AgentToServerSchema,
      create(AgentToServerSchema, { instanceUid: uuidBytes(), sequenceNum: 1n, capabilities: CAPS, agentDescription: description({ "host.name": "deflate" }) }),
    );
    const { extensions, compressed, reply } = await deflateExchange(wsUrl, token, first);
    // gorilla/websocket refuses a response without both no_context_takeover parameters.
    expect(extensions).toContain("permessage-deflate");
    expect(extensions).toContain("server_no_context_takeover");
    expect(extensions).toContain("client_no_context_takeover");
    expect(compressed).toBe(true);
    expect(Buffer.from(reply.remoteConfig!.configHash).toString("hex")).toBe(hash);

    // Bun's own WebSocket client negotiates it too.
    const bun = await RawAgent.connect(wsUrl, token);
    expect(bun.ws.extensions).toContain("permessage-deflate");
    bun.close();
  });

  test("HTTP: an answer is gzipped when the request accepts gzip (as Go's transport does by itself), plain otherwise", async () => {
    const { token, hash } = await publishedCollector("gzip");
    const post = (acceptEncoding: string | null) => {
      const body = toBinary(
        AgentToServerSchema,
        create(AgentToServerSchema, { instanceUid: uuidBytes(), sequenceNum: 1n, capabilities: CAPS, agentDescription: description({ "host.name": "gzip" }) }),
      );
      const { hostname, port } = new URL(server.base);
      return new Promise<{ encoding: string | undefined; vary: string | undefined; body: Buffer }>((resolve, reject) => {
        const headers: Record<string, string> = { Authorization: `Bearer ${token}`, "Content-Type": "application/x-protobuf" };
        if (acceptEncoding !== null) headers["Accept-Encoding"] = acceptEncoding;
        // node:http hands back the bytes as sent: no transparent decoding.
        const req = request({ hostname, port, path: "/v1/opamp", method: "POST", headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => resolve({ encoding: res.headers["content-encoding"], vary: res.headers.vary, body: Buffer.concat(chunks) }));
        });
        req.on("error", reject);
        req.end(Buffer.from(body));
      });
    };
    const gzipped = await post("gzip");
    expect(gzipped.encoding).toBe("gzip");
    expect(gzipped.vary).toBe("Accept-Encoding");
    const decoded = fromBinary(ServerToAgentSchema, gunzipSync(gzipped.body));
    expect(Buffer.from(decoded.remoteConfig!.configHash).toString("hex")).toBe(hash);
    for (const refused of [null, "gzip;q=0", "br"]) {
      const plain = await post(refused);
      expect(plain.encoding).toBeUndefined();
      expect(fromBinary(ServerToAgentSchema, plain.body).remoteConfig!.configHash).toEqual(decoded.remoteConfig!.configHash);
    }
  });
});

describe("a collector without AcceptsRemoteConfig (run from its own file, no supervisor)", () => {
  test("is reporting only: counted apart, never blocking the rollout, and said so on its record", async () => {
    // A server of its own: a fleet publish here must not wait on the other tests' collectors.
    const own = await startTestServer();
    const call = own.call.bind(own);
    const routeThrough = await deploymentKit(call);
    const wsUrl = `${own.base.replace(/^http/, "ws")}/v1/opamp`;
    const supervised = await call<{ id: string }>("/collectors", "POST", { name: "supervised" });
    const standalone = await call<{ id: string }>("/collectors", "POST", { name: "standalone" });
    await routeThrough(supervised.id, "/var/log/s/*.log");
    await routeThrough(standalone.id, "/var/log/t/*.log");
    await call("/commit", "POST", { message: "two collectors" });
    const token = async (id: string) => (await own.app.collectorTokens.mint({ actor: "test", remoteAddr: null }, id)).token;
    const agent = await RawAgent.connect(wsUrl, await token(supervised.id));
    const reporting = await RawAgent.connect(wsUrl, await token(standalone.id));
    // What the collector's opamp extension reports without the supervisor: reports_effective_config and reports_health.
    const reportingCaps =
      BigInt(AgentCapabilities.AgentCapabilities_ReportsStatus) |
      BigInt(AgentCapabilities.AgentCapabilities_ReportsEffectiveConfig) |
      BigInt(AgentCapabilities.AgentCapabilities_ReportsHealth);
    try {
      await agent.call({ agentDescription: description({ "host.name": "supervised" }) });
      expect(
        (await reporting.call({ capabilities: reportingCaps, agentDescription: description({ "host.name": "standalone" }) })).remoteConfig,
      ).toBeUndefined();
      await until(
        async () => (await call<{ health: { acceptsRemoteConfig?: boolean } | null }>(`/collectors/${standalone.id}`)).health?.acceptsRemoteConfig === false,
      );
      const pushed = agent.next((m) => m.remoteConfig !== undefined);
      await call("/publish", "POST");
      const config = (await pushed).remoteConfig!;
      await agent.call({ remoteConfigStatus: applied(config.configHash) });

      const status = await until(async () => {
        const s = await call<Status>("/publish/status");
        return s.collectors.find((c) => c.id === supervised.id)?.state === "current" && s;
      });
      expect(status.state).toBe("completed");
      expect(status.collectors.find((c) => c.id === standalone.id)?.state).toBe("reporting_only");
      expect(status.counts.reporting_only).toBeGreaterThanOrEqual(1);
      expect((await call<{ health: { acceptsRemoteConfig?: boolean } }>(`/collectors/${supervised.id}`)).health.acceptsRemoteConfig).toBe(true);

      // Run under the supervisor later, it takes config again and leaves the reporting-only count.
      const taken = await reporting.call({ capabilities: CAPS });
      expect(taken.remoteConfig).toBeDefined();
      await until(async () => (await call<Status>("/publish/status")).collectors.find((c) => c.id === standalone.id)?.state === "applying");
      expect((await call<Status>("/publish/status")).state).toBe("running");
    } finally {
      agent.close();
      reporting.close();
      await own.stop();
    }
  });
});
