/**
 * The OpAMP server over real loopback sockets with real protobuf: the
 * Elastic OpAMP client (HTTP transport) enrolling with a single-use token and
 * applying a published config, a raw WebSocket agent receiving a pushed
 * config, sequence gaps, auth and body limits, and the transport rule.
 */
import { afterAll, beforeAll, describe, expect, spyOn, test } from "bun:test";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import diagnostics from "node:diagnostics_channel";
import { randomBytes } from "node:crypto";
import { gzipSync } from "node:zlib";
import pino from "pino";
import {
  AgentCapabilities,
  AgentToServerSchema,
  ComponentHealthSchema,
  RemoteConfigStatuses,
  ServerErrorResponseType,
  ServerToAgentSchema,
} from "../../server/gen/opamp/v1/opamp_pb.ts";
import { METRICS_TOKENS } from "../../server/collectors/tokens.ts";
import { ConflictError } from "../../server/errors.ts";
import type { ChannelRequest } from "../../server/channel/channel.ts";
import { OpampChannel } from "../../server/opamp/channel.ts";
import type { Sessions } from "../../server/opamp/sessions.ts";
import { KEY_BYTES, Secrets } from "../../server/secrets/secrets.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { deploymentKit } from "../deployment.ts";
import { applyingClient, createOpAMPClient, DIAG_CH_SEND_FAIL, type AppliedConfig } from "./elastic.ts";
import { applied, CAPS, description, RawAgent, until, uuidBytes } from "./helpers.ts";

const EXTERNAL = "https://svc.example.com";
let server: TestServer;
let opampUrl: string;
let wsUrl: string;
let routeThrough: (collectorId: string, include?: string) => Promise<void>;

const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);

async function enrollmentToken(extra: Record<string, unknown> = {}): Promise<string> {
  return (await call<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp", ...extra })).token;
}

function post(body: Uint8Array | string, headers: Record<string, string>): Promise<Response> {
  return fetch(opampUrl, { method: "POST", body: body as Bun.BodyInit, headers });
}

function a2s(fields: Record<string, unknown> = {}): Uint8Array {
  return toBinary(AgentToServerSchema, create(AgentToServerSchema, { instanceUid: uuidBytes(), sequenceNum: 1n, capabilities: CAPS, ...fields }));
}

/** A channel request as the edge builds it, for driving an OpampChannel directly. */
function channelRequest(req: Request, remoteAddr = "127.0.0.1", secure = false): ChannelRequest {
  return { req, url: new URL(req.url), remoteAddr, requestId: "t", log: pino({ level: "silent" }), server: server.http.server, secure };
}

beforeAll(async () => {
  server = await startTestServer({ SVC_EXTERNALURL: EXTERNAL });
  opampUrl = `${server.base}/v1/opamp`;
  wsUrl = opampUrl.replace(/^http/, "ws");
  routeThrough = await deploymentKit(call);
});
afterAll(() => server.stop());

describe("Elastic OpAMP client over HTTP", () => {
  test("enrolls with a single-use token, gets the published config, reports APPLIED; another instance gets 401", async () => {
    const token = await enrollmentToken({ environment: "prod" });
    const configs: AppliedConfig[] = [];
    const client = applyingClient({
      endpoint: opampUrl,
      authorization: `Bearer ${token}`,
      heartbeatIntervalSeconds: 0.1,
      identifying: { "service.name": "checkout", "host.name": "web-7" },
      nonIdentifying: { "os.type": "linux" },
      onApplied: (config) => configs.push(config),
    });
    try {
      const collector = await until(async () => {
        const { items } = await call<{
          items: {
            id: string;
            name: string;
            environment: string;
            managementMode: string;
            status: string;
            tags: Record<string, string>;
            reported?: Record<string, string>;
          }[];
        }>("/collectors");
        return items.find((c) => c.name === "web-7" && c.status === "online" && c.reported !== undefined);
      });
      // The environment is the token's; what the client describes stays reported, never a tag (docs/architecture.md "Trust model").
      expect(collector).toMatchObject({
        environment: "prod",
        managementMode: "opamp",
        tags: {},
        reported: { "os.type": "linux", "service.name": "checkout", "host.name": "web-7" },
      });
      const [bound] = (await call<{ items: { collectorId: string; boundInstanceUid: string }[] }>("/enrollment-tokens")).items;
      expect(bound!.collectorId).toBe(collector.id);

      await routeThrough(collector.id);
      await call("/commit", "POST", { message: "web-7 logs" });
      await call("/publish", "POST");
      const status = await until(async () => {
        const s = await call<{ collectors: { id: string; state: string }[]; state: string }>("/publish/status");
        return s.collectors.find((c) => c.id === collector.id)?.state === "current" && s;
      });
      expect(status.state).toBe("completed");
      expect(configs).toHaveLength(1);
      expect(configs[0]!.body).toContain("filelog");
      const target = await server.app.delivery.target(collector.id);
      expect(Buffer.from(configs[0]!.hash).toString("hex")).toBe(target!.rendered.hash);

      // The same token from another instance: 401 before anything is created.
      const failures: string[] = [];
      const onFail = (m: unknown) => failures.push(String((m as { err: unknown }).err));
      diagnostics.subscribe(DIAG_CH_SEND_FAIL, onFail);
      const intruder = createOpAMPClient({ endpoint: opampUrl, headers: { Authorization: `Bearer ${token}` }, diagEnabled: true });
      intruder.setAgentDescription({ identifyingAttributes: { "service.name": "intruder" } });
      intruder.start();
      await until(async () => failures.length > 0);
      await intruder.shutdown();
      diagnostics.unsubscribe(DIAG_CH_SEND_FAIL, onFail);
      expect(failures[0]).toContain("statusCode=401");
      const { items } = await call<{ items: { name: string }[] }>("/collectors");
      expect(items.some((c) => c.name === "intruder")).toBe(false);
    } finally {
      await client.shutdown();
    }
  });
});

describe("raw WebSocket agent", () => {
  test("a pre-bound token maps to its collector; a publish is pushed without the agent asking; a gap asks for full state", async () => {
    const collector = await call<{ id: string }>("/collectors", "POST", { name: "ws-1" });
    const token = await enrollmentToken({ collectorId: collector.id });
    const agent = await RawAgent.connect(wsUrl, token);
    try {
      const first = await agent.call({ agentDescription: description({ "service.name": "ws" }) });
      expect(first.capabilities).toBe(0x27n);
      expect(first.flags & 1n).toBe(0n);
      // No interval was set (opamp.heartbeatSeconds), so none is offered: opamp-go would make it the agent's polling interval.
      expect(first.connectionSettings).toBeUndefined();
      expect(server.app.channels.find((c) => c.name === "opamp")!.health()).toMatchObject({ state: "up" });
      await until(async () => (await server.app.collectors.get(collector.id)).status === "online", 3000);

      await routeThrough(collector.id, "/var/log/ws/*.log");
      await call("/commit", "POST", { message: "ws-1" });
      // The agent sends nothing from here on: what it receives is pushed by the publish, not an answer.
      const sentBefore = agent.seq;
      const pushed = agent.next((m) => m.remoteConfig !== undefined, 20_000);
      await call(`/publish/${collector.id}`, "POST");
      const message = await pushed;
      expect(agent.seq).toBe(sentBefore);
      const file = message.remoteConfig!.config!.configMap[""]!;
      expect(file.contentType).toBe("text/yaml");
      expect(new TextDecoder().decode(file.body)).toContain("/var/log/ws/*.log");

      const ack = await agent.call({ remoteConfigStatus: applied(message.remoteConfig!.configHash) });
      expect(ack.remoteConfig).toBeUndefined(); // already sent, now applied: not sent again
      await until(
        async () =>
          (await call<{ collectors: { id: string; state: string }[] }>("/publish/status")).collectors.find((c) => c.id === collector.id)?.state === "current",
      );

      const gap = await agent.call({}, agent.seq + 3n);
      expect(gap.flags & 1n).toBe(1n);
      const inOrder = await agent.call();
      expect(inOrder.flags & 1n).toBe(0n);

      // Health and a failed config degrade the collector; the failure lands in the rollout.
      await agent.call({ health: create(ComponentHealthSchema, { healthy: false, lastError: "exporter down" }) });
      await until(async () => (await server.app.collectors.get(collector.id)).status === "degraded", 3000);
      await agent.call({
        health: create(ComponentHealthSchema, { healthy: true }),
        remoteConfigStatus: applied(message.remoteConfig!.configHash, RemoteConfigStatuses.RemoteConfigStatuses_FAILED, "bad yaml"),
      });
      await until(async () => (await server.app.collectors.get(collector.id)).health?.error === "bad yaml", 3000);
      await until(
        async () =>
          (await call<{ collectors: { id: string; state: string; error?: string }[] }>("/publish/status")).collectors.find((c) => c.id === collector.id)
            ?.error === "bad yaml",
        3000,
      );

      // Another instance_uid on the same session is refused with a close.
      const other = create(AgentToServerSchema, { instanceUid: uuidBytes(), sequenceNum: 1n, capabilities: CAPS });
      const bytes = toBinary(AgentToServerSchema, other);
      agent.ws.send(new Uint8Array([0, ...bytes]));
      expect((await agent.waitClosed()).code).toBe(1008);
    } finally {
      agent.close();
    }
  });

  test("a target's state moving (applying, current) pushes nothing and reads nothing: only the agent's own messages look at its target", async () => {
    const collector = await call<{ id: string }>("/collectors", "POST", { name: "ws-quiet" });
    const token = await enrollmentToken({ collectorId: collector.id });
    const agent = await RawAgent.connect(wsUrl, token);
    try {
      await agent.call({ agentDescription: description({ "service.name": "ws-quiet" }) });
      await routeThrough(collector.id, "/var/log/quiet/*.log");
      await call("/commit", "POST", { message: "ws-quiet" });
      const pushed = agent.next((m) => m.remoteConfig !== undefined, 20_000);
      await call(`/publish/${collector.id}`, "POST");
      const { remoteConfig } = await pushed;
      // From here the target moves outdated → applying (the push) → current (the ack), written on this replica.
      const looks = spyOn(server.app.delivery, "targetOf");
      try {
        const ack = await agent.call({ remoteConfigStatus: applied(remoteConfig!.configHash) });
        expect(ack.remoteConfig).toBeUndefined();
        await until(
          async () =>
            (await call<{ collectors: { id: string; state: string }[] }>("/publish/status")).collectors.find((c) => c.id === collector.id)?.state === "current",
        );
        // The ack's own reply looked once; a push check on either state change would have looked again.
        await agent.call();
        expect(looks.mock.calls.filter(([id]) => id === collector.id)).toHaveLength(2);
        expect(agent.received.filter((m) => m.remoteConfig !== undefined)).toHaveLength(1);
      } finally {
        looks.mockRestore();
      }
    } finally {
      agent.close();
    }
  });

  test("a collector connecting after publish gets its target on connect; reconnects map to the same collector", async () => {
    const collector = await call<{ id: string }>("/collectors", "POST", { name: "late" });
    await routeThrough(collector.id, "/var/log/late/*.log");
    await call("/commit", "POST", { message: "late" });
    await call(`/publish/${collector.id}`, "POST");
    const { token } = await server.app.collectorTokens.mint({ actor: "test", remoteAddr: null }, collector.id);
    const agent = await RawAgent.connect(wsUrl, token);
    const reply = await agent.call({ agentDescription: description({ "service.name": "late" }) });
    expect(new TextDecoder().decode(reply.remoteConfig!.config!.configMap[""]!.body)).toContain("/var/log/late/*.log");
    agent.close();
    await agent.waitClosed();
    const uidHex = Buffer.from(agent.uid).toString("hex");
    expect((await server.app.store.get<{ collectorId: string }>("opamp_instances", uidHex))?.data.collectorId).toBe(collector.id);
  });

  test("an unknown instance without full state is asked for it; disconnect marks offline", async () => {
    const collector = await call<{ id: string }>("/collectors", "POST", { name: "restarted" });
    const { token } = await server.app.collectorTokens.mint({ actor: "test", remoteAddr: null }, collector.id);
    const agent = await RawAgent.connect(wsUrl, token);
    const reply = await agent.call({}, 42n);
    expect(reply.flags & 1n).toBe(1n);
    agent.send({ agentDisconnect: {} });
    await until(async () => (await server.app.collectors.get(collector.id)).status === "offline", 3000);
    agent.close();
  });

  test("own_metrics is offered with a minted metrics credential and OpAMP settings with a minted collector token; a rotation of either pushes that one alone", async () => {
    const collector = await call<{ id: string }>("/collectors", "POST", { name: "metrics" });
    const token = await enrollmentToken({ collectorId: collector.id });
    const agent = await RawAgent.connect(wsUrl, token);
    try {
      const caps = CAPS | 64n | 256n; // ReportsOwnMetrics, AcceptsOpAMPConnectionSettings
      const reply = await agent.call({ capabilities: caps, agentDescription: description({ "service.name": "m" }) });
      const metrics = reply.connectionSettings!.ownMetrics!;
      expect(metrics.destinationEndpoint).toBe(`${EXTERNAL}/v1/metrics`);
      const own = metrics.headers!.headers[0]!.value.replace("Bearer ", "");
      expect(await server.app.metricsTokens.verify(own)).toBe(collector.id);
      expect(await server.app.collectorTokens.verify(own)).toBeNull();
      const opamp = reply.connectionSettings!.opamp!;
      expect(opamp.destinationEndpoint).toBe("wss://svc.example.com/v1/opamp");
      const control = opamp.headers!.headers[0]!.value.replace("Bearer ", "");
      expect(await server.app.collectorTokens.verify(control)).toBe(collector.id);

      const pushed = agent.next((m) => m.connectionSettings !== undefined);
      const rotated = await call<{ token: string }>(`/collectors/${collector.id}/otlp-token`, "POST");
      const settings = (await pushed).connectionSettings!;
      expect(settings.opamp!.headers!.headers[0]!.value).toBe(`Bearer ${rotated.token}`);
      expect(settings.ownMetrics!.headers!.headers[0]!.value).toBe(`Bearer ${own}`);
      expect(await server.app.collectorTokens.verify(control)).toBeNull();
      expect(await server.app.metricsTokens.verify(own)).toBe(collector.id);

      const again = agent.next((m) => m.connectionSettings !== undefined);
      const rotatedMetrics = await call<{ token: string }>(`/collectors/${collector.id}/metrics-token`, "POST");
      const second = (await again).connectionSettings!;
      expect(second.ownMetrics!.headers!.headers[0]!.value).toBe(`Bearer ${rotatedMetrics.token}`);
      expect(second.opamp!.headers!.headers[0]!.value).toBe(`Bearer ${rotated.token}`);
      expect(await server.app.metricsTokens.verify(own)).toBeNull();
    } finally {
      agent.close();
    }
  });

  test("own_metrics: losing a mint race to another replica offers the winner's credential", async () => {
    const collector = await call<{ id: string }>("/collectors", "POST", { name: "race" });
    const token = await enrollmentToken({ collectorId: collector.id });
    const tokens = server.app.metricsTokens;
    const mint = tokens.mint.bind(tokens);
    let winner = "";
    // The other replica's mint lands first; this one's write then loses with 409.
    tokens.mint = async (_who, id) => {
      winner = (await mint({ actor: "replica-b", remoteAddr: null }, id)).token;
      throw new ConflictError("rotated at the same time", "token_rotated");
    };
    const agent = await RawAgent.connect(wsUrl, token);
    try {
      const reply = await agent.call({ capabilities: CAPS | 64n, agentDescription: description({ "service.name": "race" }) });
      expect(reply.connectionSettings!.ownMetrics!.headers!.headers[0]!.value).toBe(`Bearer ${winner}`);
    } finally {
      tokens.mint = mint;
      agent.close();
    }
  });

  test("frames with another header, or text, close the socket", async () => {
    const collector = await call<{ id: string }>("/collectors", "POST", { name: "frames" });
    const { token } = await server.app.collectorTokens.mint({ actor: "test", remoteAddr: null }, collector.id);
    const bad = await RawAgent.connect(wsUrl, token);
    bad.ws.send(new Uint8Array([5, ...a2s()]));
    expect((await bad.waitClosed()).code).toBe(1003);
    const text = await RawAgent.connect(wsUrl, token);
    text.ws.send("hello");
    expect((await text.waitClosed()).code).toBe(1003);
  });
});

describe("HTTP transport, auth and limits", () => {
  test("401 without a token, with Basic, with an unknown token; before the body is read", async () => {
    const body = a2s();
    const headers = { "Content-Type": "application/x-protobuf" };
    for (const auth of [undefined, "Basic YWRtaW46YWRtaW4=", "Bearer svcct_nope", "Bearer svcen_nope", `Bearer ${server.adminToken}`]) {
      const res = await post(body, auth ? { ...headers, Authorization: auth } : headers);
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toContain("Bearer");
    }
    // Even garbage is not read when the credential fails.
    expect((await post("not protobuf", headers)).status).toBe(401);
    const upgrade = await fetch(opampUrl, {
      headers: { Upgrade: "websocket", Connection: "Upgrade", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version": "13" },
    });
    expect(upgrade.status).toBe(401);
  });

  test("a revoked enrollment token is refused at the upgrade", async () => {
    const { token, id } = await call<{ token: string; id: string }>("/enrollment-tokens", "POST", { kind: "opamp" });
    await call(`/enrollment-tokens/${id}`, "DELETE");
    await expect(RawAgent.connect(wsUrl, token)).rejects.toThrow();
  });

  test("415, a body over the limit, 405, gzip bodies and protobuf answers", async () => {
    const collector = await call<{ id: string }>("/collectors", "POST", { name: "http-1" });
    const { token } = await server.app.collectorTokens.mint({ actor: "test", remoteAddr: null }, collector.id);
    const auth = { Authorization: `Bearer ${token}` };
    expect((await post(a2s(), { ...auth, "Content-Type": "application/json" })).status).toBe(415);
    expect((await post(a2s(), { ...auth, "Content-Type": "application/x-protobuf", "Content-Encoding": "br" })).status).toBe(415);
    // Over the limit, as sent or once inflated: 200 with UNAVAILABLE and a retry-after, not 413 (server/opamp/channel.ts tooLarge).
    for (const [body, encoding] of [
      [new Uint8Array(5 * 1024 * 1024), {}],
      [gzipSync(new Uint8Array(5 * 1024 * 1024)), { "Content-Encoding": "gzip" }],
    ] as const) {
      const res = await post(body, {
        ...auth,
        "Content-Type": "application/x-protobuf",
        "OpAMP-Instance-UID": "0190f1a2-0000-7000-8000-000000000001",
        ...encoding,
      });
      expect({ status: res.status, connection: res.headers.get("connection") }).toEqual({ status: 200, connection: "close" });
      const { errorResponse, instanceUid } = fromBinary(ServerToAgentSchema, new Uint8Array(await res.arrayBuffer()));
      expect(Buffer.from(instanceUid).toString("hex")).toBe("0190f1a2000070008000000000000001");
      expect(errorResponse?.type).toBe(ServerErrorResponseType.ServerErrorResponseType_Unavailable);
      expect(errorResponse?.Details.case === "retryInfo" && errorResponse.Details.value.retryAfterNanoseconds > 0n).toBe(true);
    }
    expect((await fetch(opampUrl, { method: "PUT", headers: auth })).status).toBe(405);
    expect((await fetch(opampUrl, { headers: auth })).status).toBe(405);
    expect((await post("\xff\xff\xff", { ...auth, "Content-Type": "application/x-protobuf" })).status).toBe(400);

    const uid = uuidBytes();
    const res = await post(gzipSync(a2s({ instanceUid: uid, agentDescription: description({ "host.name": "h" }) })), {
      ...auth,
      "Content-Type": "application/x-protobuf",
      "Content-Encoding": "gzip",
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/x-protobuf");
    const reply = fromBinary(ServerToAgentSchema, new Uint8Array(await res.arrayBuffer()));
    expect(Buffer.from(reply.instanceUid).equals(Buffer.from(uid))).toBe(true);
    expect(reply.capabilities).toBe(0x27n);
    // HTTP polls continue the sequence across requests.
    const gap = fromBinary(
      ServerToAgentSchema,
      new Uint8Array(await (await post(a2s({ instanceUid: uid, sequenceNum: 7n }), { ...auth, "Content-Type": "application/x-protobuf" })).arrayBuffer()),
    );
    expect(gap.flags & 1n).toBe(1n);
  });

  test("plaintext from a non-loopback peer is refused; TLS or loopback is allowed", async () => {
    const channel = new OpampChannel(server.app);
    try {
      const ctx = (remoteAddr: string, secure: boolean) =>
        channelRequest(new Request("http://svc/v1/opamp", { headers: { Upgrade: "websocket", Authorization: "Bearer svcct_x" } }), remoteAddr, secure);
      await expect(channel.handle(ctx("10.1.2.3", false))).rejects.toMatchObject({ status: 403, code: "tls_required" });
      // Past the transport rule, the bad token is what fails.
      await expect(channel.handle(ctx("10.1.2.3", true))).rejects.toMatchObject({ status: 401 });
      await expect(channel.handle(ctx("127.0.0.1", false))).rejects.toMatchObject({ status: 401 });
    } finally {
      channel.stop();
    }
  });
});

test("a stored metrics credential sealed under another key is not offered and is logged once, not on every message", async () => {
  // A session opened with an enrollment token is offered the collector's stored credentials, so this is where a key mismatch shows.
  const { token: enrollment } = await call<{ token: string }>("/enrollment-tokens", "POST", { kind: "opamp" });
  const capabilities = CAPS | BigInt(AgentCapabilities.AgentCapabilities_ReportsOwnMetrics);
  const agent = await RawAgent.connect(wsUrl, enrollment);
  const first = await agent.call({ capabilities, agentDescription: description({ "host.name": "foreign-key" }) });
  expect(first.connectionSettings?.ownMetrics).toBeDefined();
  const collectorId = (await server.app.store.get<{ collectorId: string }>("opamp_instances", Buffer.from(agent.uid).toString("hex")))!.data.collectorId;
  const doc = (await server.app.store.get<{ sealed: string }>(METRICS_TOKENS, collectorId))!;
  const logged: string[] = [];
  const error = spyOn(server.app.logger, "error").mockImplementation(((...args: unknown[]) => void logged.push(String(args.at(-1)))) as never);
  try {
    const foreign = new Secrets([randomBytes(KEY_BYTES)]).seal("svccm_not-this-servers", `${METRICS_TOKENS}/${collectorId}`);
    await server.app.store.write([{ op: "put", collection: METRICS_TOKENS, id: collectorId, data: { ...doc.data, sealed: foreign }, expect: doc.version }]);
    for (let i = 0; i < 3; i++) {
      // A full report each time, so the settings are worked out anew.
      expect(
        (await agent.call({ capabilities, agentDescription: description({ "host.name": "foreign-key" }) })).connectionSettings?.ownMetrics,
      ).toBeUndefined();
    }
  } finally {
    error.mockRestore();
    agent.close();
  }
  expect(logged.filter((m) => m.includes("cannot be opened"))).toHaveLength(1);
});

describe("heartbeat interval (opamp.heartbeatSeconds)", () => {
  test("unset: no interval is offered, so an opamp-go client keeps its own polling interval; presence assumes opamp-go's 30 s", async () => {
    const collector = await call<{ id: string }>("/collectors", "POST", { name: "own-interval" });
    const { token } = await server.app.collectorTokens.mint({ actor: "test", remoteAddr: null }, collector.id);
    const res = await post(a2s({ agentDescription: description({ "host.name": "poller" }) }), {
      Authorization: `Bearer ${token}`,
      "Content-Type": "application/x-protobuf",
    });
    const reply = fromBinary(ServerToAgentSchema, new Uint8Array(await res.arrayBuffer()));
    expect(reply.connectionSettings?.opamp).toBeUndefined();
    await until(async () => (await server.app.collectors.get(collector.id)).health?.intervalSeconds === 30, 3000);
  });

  test("unset, to an HTTP agent that takes connection settings: the offer's interval is 0, which opamp-go refuses as a polling interval, so it keeps its own; presence learns its cadence", async () => {
    const collector = await call<{ id: string }>("/collectors", "POST", { name: "slow-poller" });
    const { token } = await server.app.collectorTokens.mint({ actor: "test", remoteAddr: null }, collector.id);
    const caps = CAPS | BigInt(AgentCapabilities.AgentCapabilities_AcceptsOpAMPConnectionSettings);
    const headers = { Authorization: `Bearer ${token}`, "Content-Type": "application/x-protobuf" };
    const uid = uuidBytes();
    const res = await post(a2s({ instanceUid: uid, capabilities: caps, agentDescription: description({ "host.name": "slow" }) }), headers);
    const reply = fromBinary(ServerToAgentSchema, new Uint8Array(await res.arrayBuffer()));
    expect(reply.connectionSettings?.opamp?.destinationEndpoint).toEndWith("/v1/opamp");
    expect(reply.connectionSettings?.opamp?.heartbeatIntervalSeconds).toBe(0n);
    // Polls two minutes apart (the last poll moved back in time): offline comes after three of its own intervals, not three of 30 s.
    const opamp = server.app.channels.find((c) => c.name === "opamp") as unknown as { sessions: Sessions };
    opamp.sessions.instance(Buffer.from(uid).toString("hex"))!.seenAt -= 120_000;
    const second = await post(a2s({ instanceUid: uid, capabilities: caps, sequenceNum: 2n }), headers);
    expect(second.status).toBe(200);
    await until(async () => (await server.app.collectors.get(collector.id)).health?.intervalSeconds === 120, 3000);
  });

  test("set: offered to agents that report heartbeats, and presence counts with it", async () => {
    const tuned = await startTestServer({ SVC_OPAMP_HEARTBEATSECONDS: "45" });
    try {
      const collector = await tuned.call<{ id: string }>("/collectors", "POST", { name: "tuned" });
      const { token } = await tuned.app.collectorTokens.mint({ actor: "test", remoteAddr: null }, collector.id);
      const agent = await RawAgent.connect(`${tuned.base.replace(/^http/, "ws")}/v1/opamp`, token);
      try {
        const reply = await agent.call({ agentDescription: description({ "service.name": "tuned" }) });
        expect(reply.connectionSettings?.opamp?.heartbeatIntervalSeconds).toBe(45n);
        await until(async () => (await tuned.app.collectors.get(collector.id)).health?.intervalSeconds === 45, 3000);
      } finally {
        agent.close();
      }
      // An agent that reports no heartbeats is offered none.
      const quiet = await RawAgent.connect(`${tuned.base.replace(/^http/, "ws")}/v1/opamp`, token);
      try {
        const caps = CAPS & ~BigInt(AgentCapabilities.AgentCapabilities_ReportsHeartbeat);
        const reply = await quiet.call({ capabilities: caps, agentDescription: description({ "service.name": "quiet" }) });
        expect(reply.connectionSettings?.opamp).toBeUndefined();
      } finally {
        quiet.close();
      }
    } finally {
      await tuned.stop();
    }
  });
});

describe("overload and memory", () => {
  test("past opamp.maxConnections an upgrade gets 503 with a jittered Retry-After; a freed slot is usable again", async () => {
    const small = await startTestServer({ SVC_OPAMP_MAXCONNECTIONS: "1" });
    try {
      const collector = await small.call<{ id: string }>("/collectors", "POST", { name: "crowded" });
      const { token } = await small.app.collectorTokens.mint({ actor: "test", remoteAddr: null }, collector.id);
      const url = `${small.base.replace(/^http/, "ws")}/v1/opamp`;
      const first = await RawAgent.connect(url, token);
      const refused = await fetch(`${small.base}/v1/opamp`, {
        headers: {
          Authorization: `Bearer ${token}`,
          Upgrade: "websocket",
          Connection: "Upgrade",
          "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
          "Sec-WebSocket-Version": "13",
        },
      });
      expect(refused.status).toBe(503);
      const retryAfter = Number(refused.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThanOrEqual(10);
      expect(retryAfter).toBeLessThan(40);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("overloaded");
      // HTTP polls are not sessions: still served.
      expect(
        (
          await fetch(`${small.base}/v1/opamp`, {
            method: "POST",
            body: a2s() as Bun.BodyInit,
            headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/x-protobuf" },
          })
        ).status,
      ).toBe(200);
      first.ws.close();
      await first.waitClosed();
      const opamp = small.app.channels.find((c) => c.name === "opamp")!;
      await until(async () => opamp.health().connections === 0, 2000);
      (await RawAgent.connect(url, token)).ws.close();
    } finally {
      await small.stop();
    }
  });

  test("past opamp.maxConcurrentRequests a request gets 503 before its token is checked", async () => {
    const channel = new OpampChannel(server.app, { maxConcurrentRequests: 0 });
    try {
      const ctx = channelRequest(new Request("http://svc/v1/opamp", { method: "POST", headers: { Authorization: "Bearer svcct_x" } }));
      const error = await channel.handle(ctx).then(
        () => null,
        (e: unknown) => e as { status: number; headers: Record<string, string> },
      );
      expect(error?.status).toBe(503);
      const retryAfter = Number(error?.headers["Retry-After"]);
      expect(retryAfter >= 1 && retryAfter < 5).toBe(true);
    } finally {
      channel.stop();
    }
  });

  test("an idle HTTP agent is forgotten, and on its return re-learnt and asked for full state", async () => {
    const collector = await call<{ id: string }>("/collectors", "POST", { name: "idle-http" });
    const { token } = await server.app.collectorTokens.mint({ actor: "test", remoteAddr: null }, collector.id);
    const channel = new OpampChannel(server.app, { idleInstanceSeconds: 0.05 });
    channel.start();
    const uid = uuidBytes();
    const poll = async (seq: bigint) => {
      const ctx = channelRequest(
        new Request("http://svc/v1/opamp", {
          method: "POST",
          body: a2s({ instanceUid: uid, sequenceNum: seq }) as Bun.BodyInit,
          headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/x-protobuf" },
        }),
      );
      const res = (await channel.handle(ctx))!;
      return fromBinary(ServerToAgentSchema, new Uint8Array(await res.arrayBuffer()));
    };
    try {
      await poll(1n);
      expect((await poll(2n)).flags & 1n).toBe(0n);
      expect(channel.instanceCount).toBe(1);
      await until(async () => channel.instanceCount === 0, 2000);
      // The store still maps it to its collector; only the sequence is unknown now.
      expect((await poll(3n)).flags & 1n).toBe(1n);
      expect(channel.instanceCount).toBe(1);
    } finally {
      channel.stop();
    }
  });
});

describe("shutdown", () => {
  test("health counts open sessions; stop() closes them with 1001", async () => {
    const collector = await call<{ id: string }>("/collectors", "POST", { name: "stopping" });
    const { token } = await server.app.collectorTokens.mint({ actor: "test", remoteAddr: null }, collector.id);
    const opamp = server.app.channels.find((c) => c.name === "opamp")!;
    const before = opamp.health().connections!;
    const sessions = await Promise.all([1, 2].map(() => RawAgent.connect(wsUrl, token)));
    await until(async () => opamp.health().connections === before + 2, 2000);
    opamp.stop!();
    for (const s of sessions) expect((await s.waitClosed()).code).toBe(1001);
    expect(opamp.health().connections).toBe(0);
  });
});
