/**
 * The OpAMP message handler on its own: AgentToServer messages in, the
 * ServerToAgent answers out, against in-memory stand-ins for the store,
 * collectors, enrollment, tokens, delivery and presence. No HTTP server, no
 * socket: a WebSocket session is a recorded Connection, an HTTP poll an
 * exchange the handler only answers.
 */
import { describe, expect, test } from "bun:test";
import { create, fromBinary, type MessageInitShape } from "@bufbuild/protobuf";
import pino from "pino";
import type { Collector } from "../../shared/collectors.ts";
import type { NewCollector } from "../collectors/collectors.ts";
import type { Contact } from "../collectors/presence.ts";
import {
  AgentCapabilities,
  AgentToServerSchema,
  RemoteConfigStatuses,
  ServerToAgentSchema,
  ServerToAgentFlags,
  type ServerToAgent,
} from "../gen/opamp/v1/opamp_pb.ts";
import type { ConfigReport } from "../rollout/records.ts";
import type { RenderedConfig } from "../rollout/renderer.ts";
import type { Doc, WriteOp } from "../store/store.ts";
import { HttpConnection } from "./connection.ts";
import { InstanceRefused, Refused, type Credential } from "./credential.ts";
import { MessageHandler, type Answer, type HandlerDeps } from "./handler.ts";
import { INSTANCES } from "./identity.ts";
import { newSession, Sessions } from "./sessions.ts";
import { encodeServerToAgent, SERVER_CAPABILITIES } from "./wire.ts";
import { applied, CAPS, description, recordedSession as session } from "../../test/opamp/helpers.ts";

const TAKES_SETTINGS = CAPS | BigInt(AgentCapabilities.AgentCapabilities_AcceptsOpAMPConnectionSettings);
const FULL_STATE = BigInt(ServerToAgentFlags.ServerToAgentFlags_ReportFullState);
const RENDERED: RenderedConfig = { hash: "ab".repeat(32), runtime: "otelcol", contentType: "application/yaml", body: "receivers: {}\n" };
const log = pino({ level: "silent" });

/** The handler over in-memory stand-ins, with what it did to them. */
function world(externalUrl = "", sessions = new Sessions()) {
  const docs = new Map<string, unknown>();
  const collectors = new Map<string, Collector>();
  const created: NewCollector[] = [];
  const bound: [string, string][] = [];
  const seen: [string, Contact][] = [];
  const reports: [string, ConfigReport][] = [];
  const fetched: string[] = [];
  /** Enrollment tokens: token → the instance it is bound to, and the collector it enrolls. */
  const enrollments = new Map<string, { instance: string | null; collectorId: string | null }>();
  /** Each collector's current token. */
  const tokens = new Map<string, string>();
  let target: RenderedConfig | null = null;
  const deps: HandlerDeps = {
    config: { externalUrl, opamp: { heartbeatSeconds: null } },
    logger: log,
    secrets: { keyId: "k1" },
    store: {
      get: async <T>(collection: string, id: string) => {
        const data = docs.get(`${collection}/${id}`);
        return data === undefined ? null : ({ collection, id, version: 1, data, updatedAt: "" } as Doc<T>);
      },
      write: async (ops: WriteOp[]) => {
        for (const op of ops) if (op.op === "put") docs.set(`${op.collection}/${op.id}`, op.data);
        return [];
      },
    },
    collectors: {
      get: async (id) => {
        const collector = collectors.get(id);
        if (!collector) throw new Error(`no collector ${id}`);
        return collector;
      },
      create: async (_who, input) => {
        created.push(input);
        const collector = { id: `c${collectors.size + 1}`, name: input.name } as Collector;
        collectors.set(collector.id, collector);
        return collector;
      },
      report: async () => false,
    },
    enrollment: {
      opampToken: async () => null,
      usableForOpamp: async (token) => enrollments.has(token),
      opampCollector: async (token) => enrollments.get(token)?.collectorId,
      redeemOpamp: async (token, uid) => {
        const enrollment = enrollments.get(token);
        if (!enrollment || (enrollment.instance !== null && enrollment.instance !== uid)) return null;
        enrollment.instance = uid;
        return { tokenId: token, collectorId: enrollment.collectorId, environment: null };
      },
      bindCollector: async (token, collectorId) => {
        bound.push([token, collectorId]);
        enrollments.get(token)!.collectorId = collectorId;
      },
    },
    collectorTokens: {
      verify: async (token) => [...tokens].find(([, current]) => current === token)?.[0] ?? null,
      current: async (collectorId) => tokens.get(collectorId) ?? null,
      mint: async () => {
        throw new Error("not minted in these tests");
      },
    },
    metricsTokens: {
      current: async () => null,
      mint: async () => {
        throw new Error("not minted in these tests");
      },
    },
    delivery: {
      target: async () => target && { target: { targetHash: target.hash } as never, rendered: target },
      targetOf: async () => target && ({ targetHash: target.hash } as never),
      delivered: async (_id, rendered) => rendered.body,
      fetched: async (_id, hash) => void fetched.push(hash),
      report: async (id, report) => void reports.push([id, report]),
      setEffective: async () => "stored",
      effectiveWelcome: () => true,
      redact: async (_id, text) => text.replaceAll("s3cret", "${secret:x}"),
    },
    presence: { seen: async (id, contact) => void seen.push([id, contact]), gone: async () => {} },
    retargeting: { settled: async () => {} },
    restarts: { pending: async () => null, claim: async () => false },
    builds: { report: async () => {}, hash: async () => null },
  };
  const handler = new MessageHandler(deps, sessions);
  return {
    handler,
    sessions,
    docs,
    collectors,
    created,
    bound,
    seen,
    reports,
    fetched,
    enrollments,
    tokens,
    publish: (rendered: RenderedConfig | null) => void (target = rendered),
    addCollector: (id: string) => void collectors.set(id, { id, name: id } as Collector),
  };
}

function a2s(fields: Omit<MessageInitShape<typeof AgentToServerSchema>, "$typeName">) {
  return create(AgentToServerSchema, { sequenceNum: 1n, capabilities: CAPS, ...fields });
}

/** The ServerToAgent as the agent would decode it (the remote config is spliced in as bytes). */
function decoded({ reply, remoteConfig }: Answer): ServerToAgent {
  return fromBinary(ServerToAgentSchema, encodeServerToAgent(reply, remoteConfig));
}

const uid = (n: number) => new Uint8Array(16).fill(n);
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");
const collectorToken = (collectorId: string, token = `svcct_${collectorId}`): Credential => ({ kind: "collector", collectorId, token });
const enrollmentToken = (token: string): Credential => ({ kind: "enrollment", token, tokenId: token, expiresAt: Date.now() + 60_000 });

/** One HTTP exchange. */
const exchange = (credential: Credential) => newSession(new HttpConnection(null), credential);

describe("first contact", () => {
  test("an enrollment token's first full report creates a collector named from the description (no tags, no environment from it), binds the token and remembers the instance", async () => {
    const w = world();
    w.enrollments.set("svcen_a", { instance: null, collectorId: null });
    const answer = decoded(
      await w.handler.receive(
        exchange(enrollmentToken("svcen_a")),
        a2s({
          instanceUid: uid(1),
          agentDescription: description({ "host.name": "web-7", "os.type": "linux", "service.version": "0.120.0", "deployment.environment": "production" }),
        }),
        log,
      ),
    );
    expect(w.created).toEqual([{ name: "web-7", managementMode: "opamp", environment: null }]);
    expect(w.bound).toEqual([["svcen_a", "c1"]]);
    expect(w.docs.get(`${INSTANCES}/${hex(uid(1))}`)).toMatchObject({ collectorId: "c1" });
    expect(answer.capabilities).toBe(SERVER_CAPABILITIES);
    expect(answer.flags & FULL_STATE).toBe(0n);
    expect(w.seen).toEqual([["c1", { channel: "opamp", intervalSeconds: 30, acceptsRemoteConfig: true, error: null }]]);
  });

  test("an instance without a description is asked for full state, and sent its config only after that report", async () => {
    const w = world();
    w.addCollector("c9");
    w.publish(RENDERED);
    const first = decoded(await w.handler.receive(exchange(collectorToken("c9")), a2s({ instanceUid: uid(2) }), log));
    expect(first.flags & FULL_STATE).toBe(FULL_STATE);
    expect(first.remoteConfig).toBeUndefined();
    const report = decoded(
      await w.handler.receive(
        exchange(collectorToken("c9")),
        a2s({ instanceUid: uid(2), sequenceNum: 2n, agentDescription: description({ "host.name": "h" }) }),
        log,
      ),
    );
    expect(report.flags & FULL_STATE).toBe(0n);
    expect(hex(report.remoteConfig!.configHash)).toBe(RENDERED.hash);
    expect(new TextDecoder().decode(report.remoteConfig!.config!.configMap[""]!.body)).toBe(RENDERED.body);
    expect(report.remoteConfig!.config!.configMap[""]!.contentType).toBe("text/yaml");
    expect(w.fetched).toEqual([RENDERED.hash]);
  });
});

describe("refusals", () => {
  test("an instance_uid of no bytes or more than 32 is a bad request", async () => {
    const w = world();
    for (const instanceUid of [new Uint8Array(0), new Uint8Array(33)]) {
      const error = await w.handler.receive(exchange(collectorToken("c1")), a2s({ instanceUid }), log).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(Refused);
      expect(error).toMatchObject({ status: 400 });
    }
  });

  test("a collector token does not speak for another existing collector's instance", async () => {
    const w = world();
    w.addCollector("c1");
    w.addCollector("c2");
    w.docs.set(`${INSTANCES}/${hex(uid(3))}`, { collectorId: "c1" });
    const error = await w.handler.receive(exchange(collectorToken("c2")), a2s({ instanceUid: uid(3) }), log).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InstanceRefused);
    expect(error).toMatchObject({ status: 403 });
    expect(w.docs.get(`${INSTANCES}/${hex(uid(3))}`)).toEqual({ collectorId: "c1" });
  });

  test("an enrollment token bound to another instance is refused with 401", async () => {
    const w = world();
    w.enrollments.set("svcen_b", { instance: hex(uid(4)), collectorId: null });
    const error = await w.handler
      .receive(exchange(enrollmentToken("svcen_b")), a2s({ instanceUid: uid(5), agentDescription: description({}) }), log)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InstanceRefused);
    expect(error).toMatchObject({ status: 401 });
    expect(w.created).toEqual([]);
  });
});

describe("reports", () => {
  test("a sequence gap asks for full state; a failed status is reported redacted and shown as the collector's error", async () => {
    const w = world();
    w.addCollector("c1");
    const credential = collectorToken("c1");
    await w.handler.receive(exchange(credential), a2s({ instanceUid: uid(6), agentDescription: description({}) }), log);
    expect(decoded(await w.handler.receive(exchange(credential), a2s({ instanceUid: uid(6), sequenceNum: 2n }), log)).flags & FULL_STATE).toBe(0n);
    expect(decoded(await w.handler.receive(exchange(credential), a2s({ instanceUid: uid(6), sequenceNum: 5n }), log)).flags & FULL_STATE).toBe(FULL_STATE);
    const status = applied(Buffer.from(RENDERED.hash, "hex"), RemoteConfigStatuses.RemoteConfigStatuses_FAILED, "bad password s3cret");
    await w.handler.receive(exchange(credential), a2s({ instanceUid: uid(6), sequenceNum: 6n, remoteConfigStatus: status }), log);
    expect(w.reports).toEqual([["c1", { hash: RENDERED.hash, state: "failed", error: "bad password ${secret:x}" }]]);
    expect(w.seen.at(-1)).toEqual(["c1", { channel: "opamp", intervalSeconds: 30, acceptsRemoteConfig: true, error: "bad password ${secret:x}" }]);
  });
});

describe("sessions", () => {
  test("a session is attached to its instance; a new target is pushed to it once, and not after it closed", async () => {
    const w = world();
    w.addCollector("c1");
    const ws = session(collectorToken("c1"));
    await w.handler.receive(ws.session, a2s({ instanceUid: uid(7), remoteConfigStatus: applied(new Uint8Array([1])) }), log);
    expect(ws.session.instance?.collectorId).toBe("c1");
    expect(w.sessions.hasCollector("c1")).toBe(true);

    w.publish(RENDERED);
    await w.handler.pushConfig("c1");
    await w.handler.pushConfig("c1");
    expect(ws.sent.map((m) => hex(m.remoteConfig!.configHash))).toEqual([RENDERED.hash]);

    const error = await w.handler.receive(ws.session, a2s({ instanceUid: uid(8), sequenceNum: 2n }), log).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 401 });

    w.sessions.closed(ws.session);
    expect(w.sessions.hasCollector("c1")).toBe(false);
    w.publish({ ...RENDERED, hash: "cd".repeat(32) });
    await w.handler.pushConfig("c1");
    expect(ws.sent).toHaveLength(1);
  });
  test("an HTTP exchange is answered and not kept: nothing is pushed to it, and its collector's presence waits on its observed polling interval", async () => {
    const w = world();
    w.addCollector("c1");
    const poll = () => w.handler.receive(exchange(collectorToken("c1")), a2s({ instanceUid: uid(11), agentDescription: description({}) }), log);
    await poll();
    expect(w.sessions.hasCollector("c1")).toBe(false);
    expect(w.sessions.instance(hex(uid(11)))?.session).toBeNull();
    w.publish(RENDERED);
    await w.handler.pushConfig("c1");
    expect(w.fetched).toEqual([]);

    w.sessions.instance(hex(uid(11)))!.seenAt = Date.now() - 120_000;
    expect(hex(decoded(await poll()).remoteConfig!.configHash)).toBe(RENDERED.hash);
    expect(w.seen.at(-1)).toEqual(["c1", { channel: "opamp", intervalSeconds: 120, acceptsRemoteConfig: true, error: null }]);
  });
});

describe("clones over HTTP", () => {
  test("two agents polling in turn with one instance UID: the second to advance after the other is told a new UID and becomes its own collector; a restart is not a clone", async () => {
    const w = world();
    w.addCollector("c1");
    const credential = collectorToken("c1");
    const poll = (seq: number, fields: Record<string, unknown> = {}) =>
      w.handler.receive(exchange(credential), a2s({ instanceUid: uid(12), sequenceNum: BigInt(seq), ...fields }), log).then(decoded);
    for (let seq = 0; seq <= 20; seq++) expect((await poll(seq)).agentIdentification).toBeUndefined();
    // Restarted: back to 0, with its description.
    for (let seq = 0; seq <= 3; seq++) expect((await poll(seq, seq === 0 ? { agentDescription: description({}) } : {})).agentIdentification).toBeUndefined();
    expect(w.created).toEqual([]);

    // A clone boots beside it: 0 … while the first goes on 4 …
    const answers = [];
    for (const seq of [0, 4, 1, 5]) answers.push(await poll(seq, seq === 0 ? { agentDescription: description({}) } : {}));
    const told = answers[3]!;
    expect(answers.slice(0, 3).map((a) => a.agentIdentification)).toEqual([undefined, undefined, undefined]);
    expect(told.agentIdentification?.newInstanceUid).toHaveLength(16);
    expect(told.flags & FULL_STATE).toBe(FULL_STATE);
    expect(w.created).toHaveLength(1);
    expect(w.created[0]!.cloneOf).toMatchObject({ collectorId: "c1", instanceUid: hex(uid(12)) });
    // Told again while it goes on with the old UID; the other is not.
    expect((await poll(2)).agentIdentification).toBeUndefined();
    expect(hex((await poll(6)).agentIdentification!.newInstanceUid)).toBe(hex(told.agentIdentification!.newInstanceUid));
    // Under its new UID it is the clone's collector.
    const newUid = told.agentIdentification!.newInstanceUid;
    await w.handler.receive(exchange(credential), a2s({ instanceUid: newUid, sequenceNum: 7n, agentDescription: description({}) }), log);
    expect(w.sessions.instance(hex(newUid))?.collectorId).toBe("c2");
    expect(w.created).toHaveLength(1);
  });
});

describe("an HTTP report refused as too large", () => {
  test("while held its full state is not asked for (nor its config sent before it), then it is asked once", async () => {
    const w = world();
    w.addCollector("c1");
    w.publish(RENDERED);
    const credential = collectorToken("c1");
    const poll = (seq: number) => w.handler.receive(exchange(credential), a2s({ instanceUid: uid(13), sequenceNum: BigInt(seq) }), log).then(decoded);
    w.sessions.holdReports(hex(uid(13)), credential);
    // Unknown, no description: would be asked for full state.
    const first = await poll(1);
    expect(first.flags & FULL_STATE).toBe(0n);
    expect(first.remoteConfig).toBeUndefined();
    expect((await poll(2)).remoteConfig).toBeUndefined();

    const later = world("", new Sessions({ refusedHoldSeconds: 0.05 }));
    later.addCollector("c1");
    later.publish(RENDERED);
    later.sessions.holdReports(hex(uid(14)), credential);
    const at = (seq: number) => later.handler.receive(exchange(credential), a2s({ instanceUid: uid(14), sequenceNum: BigInt(seq) }), log).then(decoded);
    expect((await at(1)).flags & FULL_STATE).toBe(0n);
    expect((await at(2)).flags & FULL_STATE).toBe(0n);
    await Bun.sleep(80);
    expect((await at(3)).flags & FULL_STATE).toBe(FULL_STATE);
    const reported = await later.handler
      .receive(exchange(credential), a2s({ instanceUid: uid(14), sequenceNum: 4n, agentDescription: description({}) }), log)
      .then(decoded);
    expect(reported.flags & FULL_STATE).toBe(0n);
    expect(hex(reported.remoteConfig!.configHash)).toBe(RENDERED.hash);
  });
});

describe("connection settings", () => {
  /** The Authorization header an answer's OpAMP offer carries, if it carries one. */
  const offered = (m: ServerToAgent) => m.connectionSettings?.opamp?.headers?.headers.find((h) => h.key === "Authorization")?.value;

  test("an enrollment session is offered the collector's current token once, and the new one after a rotation; a session on the old token is closed instead", async () => {
    const w = world("https://svc.example.com");
    w.addCollector("c1");
    w.tokens.set("c1", "svcct_one");
    w.enrollments.set("svcen_a", { instance: null, collectorId: "c1" });
    const enrolled = session(enrollmentToken("svcen_a"));
    const first = decoded(
      await w.handler.receive(enrolled.session, a2s({ instanceUid: uid(9), capabilities: TAKES_SETTINGS, agentDescription: description({}) }), log),
    );
    expect(first.connectionSettings?.opamp?.destinationEndpoint).toBe("wss://svc.example.com/v1/opamp");
    expect(offered(first)).toBe("Bearer svcct_one");
    const again = decoded(await w.handler.receive(enrolled.session, a2s({ instanceUid: uid(9), sequenceNum: 2n, capabilities: TAKES_SETTINGS }), log));
    expect(again.connectionSettings).toBeUndefined();

    const byToken = session(collectorToken("c1", "svcct_one"));
    const own = decoded(
      await w.handler.receive(byToken.session, a2s({ instanceUid: uid(10), capabilities: TAKES_SETTINGS, agentDescription: description({}) }), log),
    );
    expect(offered(own)).toBe("Bearer svcct_one");

    w.tokens.set("c1", "svcct_two");
    expect(w.handler.settings.rotated("control", "c1")).toBe(true);
    await w.handler.pushSettings("c1");
    expect(enrolled.sent.map(offered)).toEqual(["Bearer svcct_two"]);
    expect(byToken.sent).toEqual([]);
    expect(byToken.closes).toEqual([[1008, expect.any(String)]]);
    expect(byToken.session.closed).toBe(true);
  });
});
