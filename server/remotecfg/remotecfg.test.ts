/**
 * RemoteConfigService on its own: Fetch Requests straight into `handle`, no
 * HTTP server, over the real collectors, collector tokens, presence and
 * delivery (rollout/target-delivery.ts) on an in-memory SQLite store, with an injected clock. A publish is
 * seeded as the rollout writes it (rendered config, target, history entry).
 * test/remotecfg/remotecfg.test.ts drives the same through a whole server
 * with a Connect client and curl; this file checks the GetConfig answers,
 * the auth decisions, how reports (and the status that stands between them)
 * move the rollout, the poll interval and that an unchanged poll writes nothing.
 */
import { create, fromBinary, toBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { afterEach, beforeEach, describe, expect, spyOn, test } from "bun:test";
import { createHash, randomBytes } from "node:crypto";
import pino from "pino";
import { SYSTEM_ACTOR } from "../audit/audit.ts";
import type { ChannelCredential } from "../channel/credential.ts";
import { Collectors } from "../collectors/collectors.ts";
import type { Collector } from "../../shared/collectors.ts";
import { Presence } from "../collectors/presence.ts";
import { CollectorTokens } from "../collectors/tokens.ts";
import {
  EffectiveConfigSchema,
  GetConfigRequestSchema,
  GetConfigResponseSchema,
  RemoteConfigStatuses,
  type GetConfigResponse,
} from "../gen/collector/v1/collector_pb.ts";
import type { RenderedConfig } from "../rollout/renderer.ts";
import { TargetDelivery } from "../rollout/target-delivery.ts";
import { RENDERED, type CollectorConfig } from "../rollout/records.ts";
import { Secrets } from "../secrets/secrets.ts";
import { SecretVault } from "../secrets/vault.ts";
import { secretMarker } from "../secrets/values.ts";
import { SqliteStore } from "../store/sqlite.ts";
import { until } from "../../test/opamp/helpers.ts";
import { DEFAULT_INTERVAL_SECONDS, RemoteConfigService, SERVICE_PATH } from "./remotecfg.ts";

const log = pino({ level: "silent" });
const GET_CONFIG = `${SERVICE_PATH}GetConfig`;

let store: SqliteStore;
let collectors: Collectors;
let tokens: CollectorTokens;
let delivery: TargetDelivery;
let presence: Presence;
let vault: SecretVault;
let service: RemoteConfigService;
let clock: number;
let alloy: Collector;
let token: string;

beforeEach(async () => {
  store = new SqliteStore(":memory:");
  const secrets = new Secrets([randomBytes(32)]);
  collectors = new Collectors(store);
  tokens = new CollectorTokens(store, collectors, secrets);
  vault = new SecretVault(store, secrets);
  delivery = new TargetDelivery(store, collectors, vault, log);
  clock = Date.parse("2030-01-01T00:00:00Z");
  presence = new Presence(store, collectors, log, () => clock);
  service = new RemoteConfigService({ store, logger: log, collectors, collectorTokens: tokens, presence, delivery }, () => clock);
  alloy = await collectors.create(SYSTEM_ACTOR, { name: "alloy-1", managementMode: "rcfg-remotecfg" });
  token = (await tokens.mint(SYSTEM_ACTOR, alloy.id)).token;
});
afterEach(async () => {
  await service.close();
  await presence.stop();
  await delivery.close();
  tokens.close();
  collectors.close();
  await store.close();
});

/** A poll's answer: the response message, or the Connect error's HTTP status, code and message (as `reason`). */
type Answer = { status: 200; message: GetConfigResponse } | { status: number; code: string; reason: string };

/** A GetConfig poll as Alloy sends it (binary codec, uncompressed: the fast path), with `credential` as the edge read it. */
async function getConfig(init: MessageInitShape<typeof GetConfigRequestSchema>, credential: ChannelCredential = { ok: true, token }): Promise<Answer> {
  const body = toBinary(GetConfigRequestSchema, create(GetConfigRequestSchema, init));
  const req = new Request(`http://svc${GET_CONFIG}`, { method: "POST", headers: { "Content-Type": "application/proto" }, body });
  const res = await service.handle(req, GET_CONFIG, credential);
  if (res.status === 200) return { status: 200, message: fromBinary(GetConfigResponseSchema, new Uint8Array(await res.arrayBuffer())) };
  const error = (await res.json()) as { code: string; message: string };
  return { status: res.status, code: error.code, reason: error.message };
}

/** The answer of a poll that must succeed. */
async function config(init: MessageInitShape<typeof GetConfigRequestSchema>): Promise<GetConfigResponse> {
  const answer = await getConfig(init);
  if (!("message" in answer)) throw new Error(`GetConfig refused: ${JSON.stringify(answer)}`);
  return answer.message;
}

/** Another unary call with the JSON codec (GetConfig's takes the direct path, the others the Connect router). */
async function rpc(method: string, json: unknown, credential: ChannelCredential = { ok: true, token }): Promise<{ status: number; body: any }> {
  const path = `${SERVICE_PATH}${method}`;
  const req = new Request(`http://svc${path}`, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(json) });
  const res = await service.handle(req, path, credential);
  return { status: res.status, body: await res.json() };
}

/** Publishes `body` to the collector as the rollout stores a publish; answers the rendered config. */
async function publish(body: string, seq = 1): Promise<RenderedConfig> {
  const hash = createHash("sha256").update(body).digest("hex");
  const rendered: RenderedConfig = { hash, runtime: "alloy", contentType: "text/plain", body };
  const target: CollectorConfig = {
    collectorId: alloy.id,
    targetHash: hash,
    targetCommit: "c1",
    targetSeq: seq,
    state: "outdated",
    error: null,
    updatedAt: "",
  };
  const history = { seq, commit: "c1", hash, time: "", state: "outdated", actor: "system" };
  await store.write([
    { op: "put", collection: RENDERED, id: hash, data: rendered },
    { op: "put", collection: "collector_config", id: alloy.id, data: target },
    { op: "put", collection: "config_history", id: `${alloy.id}/${String(seq).padStart(10, "0")}`, data: history },
  ]);
  return rendered;
}

async function target(): Promise<CollectorConfig> {
  return (await store.get<CollectorConfig>("collector_config", alloy.id))!.data;
}

const CONFIG = 'logging {\n  level = "info"\n}\n';

describe("GetConfig answers", () => {
  test('before anything is published: hash "" is not_modified, any other hash gets empty content; the contact makes the collector online', async () => {
    expect(await config({ id: alloy.id })).toMatchObject({ content: "", hash: "", notModified: true });
    expect(await config({ id: alloy.id, hash: "abc" })).toMatchObject({ content: "", hash: "", notModified: false });
    expect(await collectors.get(alloy.id)).toMatchObject({
      status: "online",
      health: { channel: "remotecfg", intervalSeconds: DEFAULT_INTERVAL_SECONDS, error: null },
    });
  });

  test("a published config comes with its hash and moves the target to applying; that hash back is not_modified", async () => {
    const rendered = await publish(CONFIG);
    expect(await config({ id: alloy.id, hash: "older" })).toMatchObject({ content: CONFIG, hash: rendered.hash, notModified: false });
    expect((await target()).state).toBe("applying");
    expect(await config({ id: alloy.id, hash: rendered.hash })).toMatchObject({ content: "", hash: rendered.hash, notModified: true });
  });

  test("the content carries the secrets, the hash is that of the redacted rendering", async () => {
    const secret = vault.seal("s3cret-value", SYSTEM_ACTOR);
    await store.write([secret.op]);
    const rendered = await publish(`otelcol.auth.bearer "b" {\n  token = "${secretMarker(secret.id)}"\n}\n`);
    const answer = await config({ id: alloy.id });
    expect(answer.hash).toBe(rendered.hash);
    expect(answer.content).toContain('token = "s3cret-value"');
    expect(answer.content).not.toContain("<secret:");
  });

  test("a config naming a secret the server cannot open is not sent: unavailable, and the target says why", async () => {
    await publish(`otelcol.auth.bearer "b" {\n  token = "${secretMarker(Bun.randomUUIDv7())}"\n}\n`);
    const answer = await getConfig({ id: alloy.id });
    expect(answer).toMatchObject({ status: 503, code: "unavailable" });
    await Bun.sleep(250); // the rollout records an undelivered target in a coalesced write
    expect(await target()).toMatchObject({ state: "failed", undelivered: true });
  });
});

describe("the direct poll path answers as the Connect router does", () => {
  /** The same call both ways: status, Content-Type and body bytes. */
  async function both(contentType: string, body: Uint8Array | string, credential: ChannelCredential = { ok: true, token }) {
    const answers = [];
    for (const direct of [true, false]) {
      const req = new Request(`http://svc${GET_CONFIG}`, { method: "POST", headers: { "Content-Type": contentType }, body });
      const res = await service.handle(req, GET_CONFIG, credential, { direct });
      answers.push({ status: res.status, type: res.headers.get("content-type"), body: Buffer.from(await res.arrayBuffer()).toString() });
    }
    expect(answers[0]).toEqual(answers[1]!);
    return answers[0]!;
  }
  const binary = (init: MessageInitShape<typeof GetConfigRequestSchema>) => toBinary(GetConfigRequestSchema, create(GetConfigRequestSchema, init));

  test("binary and JSON: content, not_modified, unknown JSON fields ignored, the JSON codec's own names", async () => {
    const rendered = await publish(CONFIG);
    const full = await both("application/json", JSON.stringify({ id: alloy.id }));
    expect(full).toMatchObject({ status: 200, type: "application/json" });
    expect(JSON.parse(full.body)).toEqual({ content: CONFIG, hash: rendered.hash });
    const unchanged = await both("application/json", JSON.stringify({ id: alloy.id, hash: rendered.hash, notYetAField: 1 }));
    expect(JSON.parse(unchanged.body)).toEqual({ hash: rendered.hash, notModified: true });
    const statusReport = JSON.stringify({ id: alloy.id, hash: rendered.hash, remoteConfigStatus: { status: "RemoteConfigStatuses_APPLIED" } });
    expect(JSON.parse((await both("application/json", statusReport)).body)).toEqual({ hash: rendered.hash, notModified: true });
    expect((await target()).state).toBe("current");
    const proto = await both("application/proto", binary({ id: alloy.id, hash: rendered.hash }));
    expect(proto).toMatchObject({ status: 200, type: "application/proto" });
  });

  test("refusals: no token, a dead token, another collector's id, an empty id, JSON that does not parse or has a wrong type", async () => {
    const other = await collectors.create(SYSTEM_ACTOR, { name: "alloy-2", managementMode: "rcfg-remotecfg" });
    for (const [type, body] of [
      ["application/json", JSON.stringify({ id: alloy.id })],
      ["application/proto", binary({ id: alloy.id })],
    ] as const) {
      expect(await both(type, body, { ok: false, refused: "missing" })).toMatchObject({ status: 401, type: "application/json" });
      expect(await both(type, body, { ok: true, token: "svcct_" + "x".repeat(43) })).toMatchObject({ status: 401 });
    }
    expect(JSON.parse((await both("application/json", JSON.stringify({ id: other.id }))).body)).toMatchObject({ code: "permission_denied" });
    expect(JSON.parse((await both("application/proto", binary({ id: "" }))).body)).toMatchObject({ code: "invalid_argument" });
    for (const body of ["{", JSON.stringify({ id: 7 }), JSON.stringify([alloy.id])]) {
      const refused = await both("application/json", body);
      expect(refused).toMatchObject({ status: 400, type: "application/json" });
      expect(JSON.parse(refused.body)).toMatchObject({ code: "invalid_argument" });
    }
  });

  test("a binary body that does not parse is invalid_argument, as connect-go servers answer (connect-es's router says internal)", async () => {
    const req = new Request(`http://svc${GET_CONFIG}`, {
      method: "POST",
      headers: { "Content-Type": "application/proto" },
      body: new Uint8Array([0x0a, 0xff, 0xff]),
    });
    const res = await service.handle(req, GET_CONFIG, { ok: true, token });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: "invalid_argument" });
  });
});

describe("auth and collector id", () => {
  test("no Bearer token, or one that is not a live collector token, is unauthenticated (401)", async () => {
    for (const credential of [
      { ok: false, refused: "missing" } as const,
      { ok: true, token: "svcct_" + "x".repeat(43) } as const,
      { ok: true, token: "svcsa_" + "x".repeat(43) } as const,
    ]) {
      expect(await getConfig({ id: alloy.id }, credential)).toMatchObject({ status: 401, code: "unauthenticated" });
    }
  });

  test("a token used with another collector's id is permission_denied (403); an empty id is invalid_argument", async () => {
    const other = await collectors.create(SYSTEM_ACTOR, { name: "alloy-2", managementMode: "rcfg-remotecfg" });
    expect(await getConfig({ id: other.id })).toMatchObject({ status: 403, code: "permission_denied" });
    expect(await getConfig({ id: "" })).toMatchObject({ status: 400, code: "invalid_argument" });
    expect(await rpc("GetConfig", { id: other.id })).toMatchObject({ status: 403, body: { code: "permission_denied" } });
  });

  test("a rotated token is refused at once; the new one works", async () => {
    const rotated = (await tokens.mint(SYSTEM_ACTOR, alloy.id)).token;
    expect(await getConfig({ id: alloy.id })).toMatchObject({ status: 401, code: "unauthenticated" });
    expect(await getConfig({ id: alloy.id }, { ok: true, token: rotated })).toMatchObject({ status: 200 });
  });

  test("a collector managed over OpAMP is failed_precondition, and its token serves no config", async () => {
    await collectors.update(SYSTEM_ACTOR, alloy.id, { managementMode: "opamp" });
    await publish(CONFIG);
    const answer = await getConfig({ id: alloy.id });
    expect(answer).toMatchObject({ status: 400, code: "failed_precondition" });
    expect((answer as { reason: string }).reason).toContain("rcfg-remotecfg");
    expect((await target()).state).toBe("outdated");
  });
});

describe("status reports move the rollout", () => {
  const applied = { status: RemoteConfigStatuses.RemoteConfigStatuses_APPLIED };

  test("APPLYING, FAILED (its message redacted) and APPLIED move the target and the collector's health", async () => {
    const secret = vault.seal("s3cret-value", SYSTEM_ACTOR);
    await store.write([secret.op]);
    const { hash } = await publish(`otelcol.auth.bearer "b" {\n  token = "${secretMarker(secret.id)}"\n}\n`);
    await config({ id: alloy.id });

    await config({ id: alloy.id, hash, remoteConfigStatus: { status: RemoteConfigStatuses.RemoteConfigStatuses_APPLYING } });
    expect((await target()).state).toBe("applying");

    const errorMessage = 'bad token "s3cret-value"';
    await config({ id: alloy.id, hash, remoteConfigStatus: { status: RemoteConfigStatuses.RemoteConfigStatuses_FAILED, errorMessage } });
    const failed = await target();
    expect(failed).toMatchObject({ state: "failed" });
    expect(failed.error).toBe(`bad token "${secretMarker(secret.id)}"`);
    expect(await collectors.get(alloy.id)).toMatchObject({ status: "degraded", health: { error: failed.error } });

    expect((await config({ id: alloy.id, hash, remoteConfigStatus: applied })).notModified).toBe(true);
    expect(await target()).toMatchObject({ state: "current", error: null });
    expect(await collectors.get(alloy.id)).toMatchObject({ status: "online", health: { error: null } });
    const history = await store.list<{ state: string }>("config_history", { prefix: `${alloy.id}/` });
    expect(history.map((d) => d.data.state)).toEqual(["current"]);
  });

  test("a report about another hash than the target changes nothing", async () => {
    await publish(CONFIG);
    await config({ id: alloy.id });
    await config({ id: alloy.id, hash: "f".repeat(64), remoteConfigStatus: applied });
    expect((await target()).state).toBe("applying");
  });

  test("a status stands until another is sent: a later config polled with its hash and no status takes it, after a restart too", async () => {
    const first = await publish(CONFIG);
    await config({ id: alloy.id });
    await config({ id: alloy.id, hash: first.hash, remoteConfigStatus: applied });
    // Alloy loads the next config and sends its hash with no status: APPLIED is unchanged.
    const second = await publish("// two\n" + CONFIG, 2);
    await config({ id: alloy.id, hash: first.hash });
    expect((await target()).state).toBe("applying");
    await config({ id: alloy.id, hash: second.hash });
    expect((await target()).state).toBe("current");

    // A restarted server (or another replica) has no memory of the collector: the stored status stands.
    service = new RemoteConfigService({ store, logger: log, collectors, collectorTokens: tokens, presence, delivery }, () => clock);
    const third = await publish("// three\n" + CONFIG, 3);
    await config({ id: alloy.id, hash: second.hash });
    await config({ id: alloy.id, hash: third.hash });
    expect((await target()).state).toBe("current");

    // So does a FAILED: a config that fails with the very same message is failed too.
    const fourth = await publish("// four\n" + CONFIG, 4);
    await config({ id: alloy.id, hash: third.hash });
    const failed = { status: RemoteConfigStatuses.RemoteConfigStatuses_FAILED, errorMessage: 'config.alloy:1:1: component "x" does not exist' };
    await config({ id: alloy.id, hash: fourth.hash, remoteConfigStatus: failed });
    const fifth = await publish("// five\n" + CONFIG, 5);
    await config({ id: alloy.id, hash: fourth.hash });
    await config({ id: alloy.id, hash: fifth.hash });
    expect(await target()).toMatchObject({ state: "failed", error: failed.errorMessage });
  });

  test("a wave of status reports from many collectors is stored in a few transactions, each poll answered once its own is stored", async () => {
    const fleet = await Promise.all(
      Array.from({ length: 20 }, async (_, i) => {
        const collector = await collectors.create(SYSTEM_ACTOR, { name: `alloy-wave-${i}`, managementMode: "rcfg-remotecfg" });
        return { id: collector.id, credential: { ok: true as const, token: (await tokens.mint(SYSTEM_ACTOR, collector.id)).token } };
      }),
    );
    const writes = spyOn(store, "write");
    const answers = await Promise.all(fleet.map(({ id, credential }) => getConfig({ id, hash: "h-wave", remoteConfigStatus: applied }, credential)));
    expect(answers.map((a) => a.status)).toEqual(fleet.map(() => 200));
    const statusWrites = writes.mock.calls.filter(([ops]) => ops.some((op) => op.collection === "remotecfg_status"));
    expect(statusWrites.length).toBeLessThan(fleet.length / 2);
    const stored = await store.getMany<{ hash: string; state: string }>(
      "remotecfg_status",
      fleet.map((c) => c.id),
    );
    expect(fleet.map(({ id }) => stored.get(id)?.data)).toEqual(fleet.map(() => expect.objectContaining({ hash: "h-wave", state: "applied" })));
    writes.mockRestore();
  });

  test("polls with the target's hash and no status, while it awaits its verdict, read the standing status once, not per poll", async () => {
    const { hash } = await publish(CONFIG);
    await config({ id: alloy.id });
    const get = spyOn(store, "get");
    for (let i = 0; i < 5; i++) expect((await config({ id: alloy.id, hash })).notModified).toBe(true);
    expect(get.mock.calls.filter(([collection]) => collection === "remotecfg_status")).toHaveLength(1);
    expect((await target()).state).toBe("applying");
    get.mockRestore();
  });

  test("a FAILED with Connect's error text tells of a failed fetch, not of the config: no report", async () => {
    const { hash } = await publish(CONFIG);
    await config({ id: alloy.id });
    await config({ id: alloy.id, hash, remoteConfigStatus: applied });
    for (const errorMessage of [
      "unavailable: dial tcp 127.0.0.1:1: connect: connection refused",
      "unauthenticated: the Bearer token is not a live collector token",
      "deadline_exceeded",
    ]) {
      await config({ id: alloy.id, hash, remoteConfigStatus: { status: RemoteConfigStatuses.RemoteConfigStatuses_FAILED, errorMessage } });
      expect(await target()).toMatchObject({ state: "current", error: null });
      expect(await collectors.get(alloy.id)).toMatchObject({ status: "online", health: { error: null } });
    }
    // A config that failed keeps its own message through the failed fetches after it.
    const next = await publish("// two\n" + CONFIG, 2);
    await config({ id: alloy.id, hash });
    const diagnostics = 'config.alloy:3:5: unrecognized attribute name "levle"';
    await config({
      id: alloy.id,
      hash: next.hash,
      remoteConfigStatus: { status: RemoteConfigStatuses.RemoteConfigStatuses_FAILED, errorMessage: diagnostics },
    });
    await config({
      id: alloy.id,
      hash: next.hash,
      remoteConfigStatus: { status: RemoteConfigStatuses.RemoteConfigStatuses_FAILED, errorMessage: "unavailable: EOF" },
    });
    expect(await target()).toMatchObject({ state: "failed", error: diagnostics });
  });
});

describe("bookkeeping", () => {
  test("the poll interval follows the gaps between polls, rounded up to a step", async () => {
    await config({ id: alloy.id });
    clock += 90_000;
    await config({ id: alloy.id });
    expect((await collectors.get(alloy.id)).health?.intervalSeconds).toBe(120);
    clock += 45_000;
    await config({ id: alloy.id });
    expect((await collectors.get(alloy.id)).health?.intervalSeconds).toBe(60);
  });

  test("an effective config is stored (and checked for drift) when its content changes, and a poll that changes nothing writes nothing", async () => {
    const { hash } = await publish(CONFIG);
    const effective = (body: string) =>
      create(EffectiveConfigSchema, { configMap: { configMap: { "": { body: new TextEncoder().encode(body), contentType: "text/plain" } } } });
    const poll = { id: alloy.id, hash, remoteConfigStatus: { status: RemoteConfigStatuses.RemoteConfigStatuses_APPLIED }, effectiveConfig: effective(CONFIG) };
    await config(poll);
    expect((await delivery.effective(alloy.id))?.files).toEqual([{ name: "", contentType: "text/plain", body: CONFIG }]);
    await until(async () => (await delivery.target(alloy.id))?.target.drift);

    const written: string[] = [];
    const unwatch = store.watch((changes) => void written.push(...changes.map((c) => `${c.collection}/${c.id}`)));
    try {
      for (let i = 0; i < 3; i++) await config(poll);
      await Bun.sleep(250); // past the coalesced writes' delay
      expect(written).toEqual([]);
      await config({ ...poll, effectiveConfig: effective("// changed\n") });
      // The new content, then the drift check's new answer (it now differs from the target), judged in a worker.
      await until(async () => (await delivery.target(alloy.id))?.target.drift?.drifted);
      expect(written).toEqual([`effective_configs/${alloy.id}`, `collector_config/${alloy.id}`]);
    } finally {
      unwatch();
    }
  });

  test("RegisterCollector records name and attributes once; UnregisterCollector makes the collector offline", async () => {
    const register = { id: alloy.id, name: "alloy-host-1", attributes: { env: "prod" }, localAttributes: { os: "linux" } };
    expect(await rpc("RegisterCollector", register)).toEqual({ status: 200, body: {} });
    const first = (await service.registration(alloy.id))!;
    expect(first).toMatchObject({ collectorId: alloy.id, name: "alloy-host-1", attributes: { env: "prod", os: "linux" } });
    clock += 1000;
    await rpc("RegisterCollector", register);
    expect((await service.registration(alloy.id))!.registeredAt).toBe(first.registeredAt);
    expect((await rpc("RegisterCollector", { ...register, id: "someone-else" })).body.code).toBe("permission_denied");

    expect(await rpc("UnregisterCollector", { id: alloy.id })).toEqual({ status: 200, body: {} });
    expect((await collectors.get(alloy.id)).status).toBe("offline");
  });
});
