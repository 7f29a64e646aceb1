import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import pino from "pino";
import { SYSTEM_ACTOR } from "../audit/audit.ts";
import { Collectors, COLLECTORS } from "../collectors/collectors.ts";
import { Enrollment } from "../enrollment/enrollment.ts";
import { decodeJson, ingestMessage } from "../telemetry/intake.ts";
import { StallDetector } from "../telemetry/stall.ts";
import { ThroughputWindow } from "../telemetry/window.ts";
import { cumulativeSum, metricsRequest } from "../../test/telemetry/points.ts";
import { verifySignature as verify, webhookReceiver } from "../../test/webhooks/receiver.ts";
import { CONFIGS, ROLLOUTS } from "../rollout/records.ts";
import { Secrets } from "../secrets/secrets.ts";
import { SqliteStore } from "../store/sqlite.ts";
import { ValidationError } from "../errors.ts";
import { retryDelay, WebhookSender } from "./deliver.ts";
import { WebhookEvents } from "./events.ts";
import { WebhookSweep } from "./sweep.ts";
import { QUEUE, Webhooks } from "./webhooks.ts";

const SECRET = "s3cret-s3cret-s3cret";
const logger = pino({ level: "silent" });

/** A receiver answering with the statuses given, in turn (then 200). */
const receiver = (statuses: number[] = []) => webhookReceiver(() => statuses.shift() ?? 200);

let store: SqliteStore;
let now: number;
let hooks: Webhooks;
let sender: WebhookSender;
const stops: (() => unknown)[] = [];

beforeEach(() => {
  store = new SqliteStore(":memory:");
  now = Date.parse("2026-01-01T00:00:00Z");
  hooks = new Webhooks(store, new Secrets([randomBytes(32)]), () => now, true); // the receivers are on loopback
  sender = new WebhookSender(store, hooks, logger, { now: () => now, baseDelayMs: 1000, maxDelayMs: 60_000, giveUpMs: 86_400_000 });
});
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
  await store.close();
});

describe("webhooks", () => {
  test("a delivery is signed; a 500 is retried after the backoff and the log shows both attempts", async () => {
    const rx = receiver([500]);
    stops.push(rx.stop);
    const hook = await hooks.create(SYSTEM_ACTOR, { url: rx.url, events: ["rollout.completed"], secret: SECRET });
    expect(await hooks.emit("rollout.completed", "r1", { rolloutId: "r1" })).toBe(1);
    expect(await hooks.emit("rollout.completed", "r1", { rolloutId: "r1" })).toBe(0); // the same event again: queued once
    await sender.tick();
    expect(rx.got).toHaveLength(1);
    await sender.tick(); // not due yet
    expect(rx.got).toHaveLength(1);
    now += 1000;
    await sender.tick();
    expect(rx.got).toHaveLength(2);
    const [first, second] = rx.got;
    expect(second!.body).toBe(first!.body);
    expect(verify(SECRET, second!.signature, second!.body)).toBe(true);
    expect(verify("wrong-secret-wrong", second!.signature, second!.body)).toBe(false);
    const payload = JSON.parse(second!.body);
    expect(payload).toEqual({ id: expect.any(String), event: "rollout.completed", time: "2026-01-01T00:00:00.000Z", data: { rolloutId: "r1" } });
    const log = await hooks.deliveries(hook.id);
    expect(log.map((d) => [d.attempt, d.status, d.httpStatus])).toEqual([
      [2, "delivered", 200],
      [1, "failed", 500],
    ]);
    expect(log[1]!.error).toBe("HTTP 500");
    expect(log[1]!.nextAttemptAt).not.toBeNull();
    now += 10 * 86_400_000;
    await sender.tick();
    expect(rx.got).toHaveLength(2);
  });

  test("retries stop a day after the first attempt (abandoned)", async () => {
    const hook = await hooks.create(SYSTEM_ACTOR, { url: "http://127.0.0.1:1/closed", events: ["collector.drifted"], secret: SECRET });
    await hooks.emit("collector.drifted", "c1/x", {});
    await sender.tick();
    now += 86_400_000;
    await sender.tick();
    const log = await hooks.deliveries(hook.id);
    expect(log.map((d) => d.status)).toEqual(["abandoned", "failed"]);
    expect((await store.list(QUEUE))[0]!.data).toMatchObject({ doneAt: now });
  });

  test("a receiver that never answers holds only its own hook, until the timeout fails the attempt", async () => {
    const hanging = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Promise<Response>(() => {}) });
    stops.push(() => hanging.stop(true));
    const rx = receiver();
    stops.push(rx.stop);
    const quick = new WebhookSender(store, hooks, logger, { now: () => now, timeoutMs: 300, baseDelayMs: 1000 });
    const stuck = await hooks.create(SYSTEM_ACTOR, { url: `http://127.0.0.1:${hanging.port}/x`, events: ["rollout.completed"], secret: SECRET });
    await hooks.create(SYSTEM_ACTOR, { url: rx.url, events: ["rollout.completed"], secret: SECRET });
    await hooks.emit("rollout.completed", "r1", { rolloutId: "r1" });
    const pass = quick.tick();
    // The other hook is delivered while the first one's attempt is still waiting.
    for (let i = 0; i < 100 && rx.got.length === 0; i++) await Bun.sleep(10);
    expect(rx.got).toHaveLength(1);
    expect(await hooks.deliveries(stuck.id)).toEqual([]);
    await pass;
    const [failed] = await hooks.deliveries(stuck.id);
    expect(failed).toMatchObject({ status: "failed", httpStatus: null, attempt: 1 });
    expect(failed!.error).toMatch(/time|abort/i);
  });

  test("backoff doubles up to its cap, with jitter between half and all of it", () => {
    expect(retryDelay(1, 1000, 60_000, 1)).toBe(1000);
    expect(retryDelay(3, 1000, 60_000, 1)).toBe(4000);
    expect(retryDelay(3, 1000, 60_000, 0)).toBe(2000);
    expect(retryDelay(30, 1000, 60_000, 1)).toBe(60_000);
  });

  test("the secret is never listed; plain http only to loopback; create and delete are audited", async () => {
    const hook = await hooks.create(SYSTEM_ACTOR, { url: "https://example.com/x", events: ["rollout.paused"], secret: SECRET });
    expect(JSON.stringify(await hooks.list())).not.toContain(SECRET);
    expect(JSON.stringify(await store.list("webhooks"))).not.toContain(SECRET);
    await expect(hooks.create(SYSTEM_ACTOR, { url: "http://example.com/x", events: ["rollout.paused"], secret: SECRET })).rejects.toBeInstanceOf(
      ValidationError,
    );
    await expect(hooks.create(SYSTEM_ACTOR, { url: "ftp://127.0.0.1/x", events: ["rollout.paused"], secret: SECRET })).rejects.toThrow();
    await hooks.delete(SYSTEM_ACTOR, hook.id);
    const actions = (await store.queryAudit({ limit: 10 })).map((e) => e.action);
    expect(actions).toEqual(["webhook.delete", "webhook.create"]);
  });

  test("the delivery log is bounded per hook", async () => {
    const hook = await hooks.create(SYSTEM_ACTOR, { url: "https://example.com/x", events: ["rollout.paused"], secret: SECRET });
    for (let i = 0; i < 105; i++) {
      await hooks.log(hook.id, {
        eventId: `e${i}`,
        event: "rollout.paused",
        attempt: 1,
        status: "delivered",
        httpStatus: 200,
        error: null,
        time: new Date(now).toISOString(),
        durationMs: 1,
        nextAttemptAt: null,
      });
      now += 1;
    }
    const log = await hooks.deliveries(hook.id);
    expect(log).toHaveLength(100);
    expect(log[0]!.eventId).toBe("e104");
  });
});

describe("webhook events from the change feed", () => {
  const collector = (status: string, lastSeen: string | null) => ({ id: "c1", name: "edge-1", status, lastSeen });
  const putCollector = (data: unknown) => store.write([{ op: "put", collection: COLLECTORS, id: "c1", data }]);

  test("collector.offline is sent after N minutes, only if still offline", async () => {
    const rx = receiver();
    stops.push(rx.stop);
    const events = new WebhookEvents(store, hooks, logger, { offlineMinutes: 5, now: () => now });
    events.start();
    stops.push(() => events.stop());
    await hooks.create(SYSTEM_ACTOR, { url: rx.url, events: ["collector.offline"], secret: SECRET });
    await putCollector(collector("online", "2026-01-01T00:00:00Z"));
    await putCollector(collector("offline", "2026-01-01T00:00:00Z"));
    await events.settled();
    await sender.tick();
    expect(rx.got).toHaveLength(0);
    now += 5 * 60_000;
    await sender.tick();
    expect(rx.got).toHaveLength(1);
    expect(JSON.parse(rx.got[0]!.body)).toMatchObject({ event: "collector.offline", data: { collectorId: "c1", name: "edge-1", offlineMinutes: 5 } });

    // Back online before the N minutes: nothing is sent.
    await putCollector(collector("online", "2026-01-01T00:06:00Z"));
    await putCollector(collector("offline", "2026-01-01T00:06:00Z"));
    await events.settled();
    await putCollector(collector("online", "2026-01-01T00:07:00Z"));
    now += 5 * 60_000;
    await sender.tick();
    expect(rx.got).toHaveLength(1);
  });

  test("a staged rollout's pause is rollout.paused; any rollout's end is rollout.completed, and rollout.failed too with a failure or an abort; each once", async () => {
    const rx = receiver();
    stops.push(rx.stop);
    const events = new WebhookEvents(store, hooks, logger);
    events.start();
    stops.push(() => events.stop());
    await hooks.create(SYSTEM_ACTOR, { url: rx.url, events: ["rollout.paused", "rollout.completed", "rollout.failed"], secret: SECRET });
    const counts = (failed: number) => ({ current: 2, applying: 0, failed, outdated: 0, offline: 1, reporting_only: 0, queued: 0 });
    const ended = (outcome: string, failed: number) => ({ ended: { at: "2026-01-01T00:00:00Z", outcome, counts: counts(failed) } });
    const staged = (id: string, phase: string, end = {}) => ({
      id,
      kind: "publish",
      commit: "abc",
      batchEnds: [1, 2],
      released: 1,
      phase,
      pausedReason: phase === "paused" ? "failures" : null,
      ...end,
    });
    // The feed handler reads the document as it is then, so each write settles before the next.
    const put = async (data: { id: string; [key: string]: unknown }) => {
      await store.write([{ op: "put", collection: ROLLOUTS, id: data.id, data }]);
      await events.settled();
    };
    await put(staged("r1", "running"));
    await put(staged("r1", "paused"));
    await put(staged("r1", "done"));
    await put(staged("r1", "done", ended("completed", 0)));
    await put(staged("r1", "done", ended("completed", 0))); // written again: no second event
    await put({ id: "r2", kind: "rollback", commit: "abc", ...ended("completed_with_errors", 1) });
    await put(staged("r3", "aborted", ended("aborted", 0)));
    await events.settled();
    for (let i = 0; i < 8; i++) await sender.tick(); // one in flight per hook: one each pass
    const got = rx.got.map((g) => JSON.parse(g.body));
    // The queue does not promise an order across events.
    expect(got.map((g) => `${g.data.rolloutId} ${g.event}`).sort()).toEqual([
      "r1 rollout.completed",
      "r1 rollout.paused",
      "r2 rollout.completed",
      "r2 rollout.failed",
      "r3 rollout.completed",
      "r3 rollout.failed",
    ]);
    const find = (key: string) => got.find((g) => `${g.data.rolloutId} ${g.event}` === key).data;
    expect(find("r1 rollout.paused")).toMatchObject({ rolloutId: "r1", reason: "failures", released: 1, batches: 2 });
    expect(find("r2 rollout.failed")).toMatchObject({ rolloutId: "r2", kind: "rollback", outcome: "completed_with_errors", counts: counts(1) });
  });

  test("collector.drifted when a current target's drift turns true, once per drift check", async () => {
    const rx = receiver();
    stops.push(rx.stop);
    const events = new WebhookEvents(store, hooks, logger);
    events.start();
    stops.push(() => events.stop());
    await hooks.create(SYSTEM_ACTOR, { url: rx.url, events: ["collector.drifted"], secret: SECRET });
    const target = (drifted: boolean, checkedAt: string) => ({
      collectorId: "c1",
      state: "current",
      drift: { drifted, reason: drifted ? "a processor differs" : null, targetHash: "h1", checkedAt },
    });
    const put = async (data: unknown) => {
      await store.write([{ op: "put", collection: CONFIGS, id: "c1", data }]);
      await events.settled();
    };
    await put(target(false, "2026-01-01T00:00:00Z"));
    await put(target(true, "2026-01-01T00:01:00Z"));
    await put(target(true, "2026-01-01T00:01:00Z")); // rewritten, same check: nothing new
    await sender.tick();
    await sender.tick();
    expect(rx.got.map((g) => JSON.parse(g.body))).toEqual([
      expect.objectContaining({ event: "collector.drifted", data: { collectorId: "c1", reason: "a processor differs", checkedAt: "2026-01-01T00:01:00Z" } }),
    ]);
  });
});

describe("detectors that wait, on an injected clock", () => {
  const MINUTE = 60_000;

  /** A real collector record in the registry, with `status`. */
  async function collectorWith(collectors: Collectors, status: string) {
    const created = await collectors.create(SYSTEM_ACTOR, { name: "edge-1" });
    await setStatus(created.id, status);
    return created;
  }
  async function setStatus(id: string, status: string) {
    const doc = (await store.get<Record<string, unknown>>(COLLECTORS, id))!;
    await store.write([{ op: "put", collection: COLLECTORS, id, data: { ...doc.data, status }, expect: doc.version }]);
  }

  test("collector.stalled: online, zero accepted for N minutes after traffic; once per stall, again after traffic returns", async () => {
    const rx = receiver();
    stops.push(rx.stop);
    const collectors = new Collectors(store);
    stops.push(() => collectors.close());
    const window = new ThroughputWindow({ now: () => now });
    const sweep = new WebhookSweep(
      hooks,
      {
        stalls: new StallDetector(window, 5 * MINUTE),
        eachCollector: (visit) => collectors.each(visit),
        expiring: async () => 0,
        tokenExpiringHours: 24,
      },
      logger,
      { now: () => now },
    );
    await hooks.create(SYSTEM_ACTOR, { url: rx.url, events: ["collector.stalled"], secret: SECRET });
    const c = await collectorWith(collectors, "online");
    let pointSeconds = 1_000;
    /** One push a minute on both clocks: the receiver's accepted counter at `value`. */
    const minute = async (value: number) => {
      now += MINUTE;
      pointSeconds += 60;
      const body = JSON.stringify(metricsRequest([cumulativeSum("otelcol_receiver_accepted_log_records", value, pointSeconds, { receiver: "otlp" })]));
      expect(ingestMessage(window, c.id, decodeJson(new TextEncoder().encode(body))).rejected).toBe(0);
      await sweep.tick();
      await sender.tick();
    };

    // Counters that never grew are no traffic: a collector idle from the start never stalls.
    for (let i = 0; i < 7; i++) await minute(100);
    expect(rx.got).toHaveLength(0);
    await minute(150); // traffic
    const acceptedAt = new Date(now).toISOString();
    for (let i = 0; i < 4; i++) await minute(150);
    expect(rx.got).toHaveLength(0); // four quiet minutes
    await minute(150); // the fifth
    expect(rx.got).toHaveLength(1);
    expect(verify(SECRET, rx.got[0]!.signature, rx.got[0]!.body)).toBe(true);
    expect(JSON.parse(rx.got[0]!.body)).toMatchObject({
      event: "collector.stalled",
      data: { collectorId: c.id, name: "edge-1", lastAcceptedAt: acceptedAt, stalledMinutes: 5 },
    });
    for (let i = 0; i < 10; i++) await minute(150);
    expect(rx.got).toHaveLength(1); // the same stall: once

    // Traffic returns, then stops again while the collector is offline: announced when it is back online.
    await minute(160);
    await setStatus(c.id, "offline");
    for (let i = 0; i < 6; i++) await minute(160);
    expect(rx.got).toHaveLength(1);
    await setStatus(c.id, "online");
    await minute(160);
    expect(rx.got).toHaveLength(2);
    expect(JSON.parse(rx.got[1]!.body).data.lastAcceptedAt).toBe(new Date(now - 7 * MINUTE).toISOString());
  });

  test("collector.stalled behind a load balancer: two replicas on one store, pushes alternating, one delivery per stall", async () => {
    const rx = receiver();
    stops.push(rx.stop);
    const collectors = new Collectors(store);
    stops.push(() => collectors.close());
    await hooks.create(SYSTEM_ACTOR, { url: rx.url, events: ["collector.stalled"], secret: SECRET });
    const c = await collectorWith(collectors, "online");
    const replicas = [0, 1].map(() => {
      const window = new ThroughputWindow({ now: () => now });
      const sweep = new WebhookSweep(
        hooks,
        { stalls: new StallDetector(window, 5 * MINUTE), eachCollector: (visit) => collectors.each(visit), expiring: async () => 0, tokenExpiringHours: 24 },
        logger,
        { now: () => now },
      );
      return { window, sweep };
    });
    let pointSeconds = 1_000;
    let turn = 0;
    /** A push every 30 s, to each replica in turn; both sweep and the queue is sent after each. */
    const push = async (value: number) => {
      now += 30_000;
      pointSeconds += 30;
      const body = JSON.stringify(metricsRequest([cumulativeSum("otelcol_receiver_accepted_log_records", value, pointSeconds, { receiver: "otlp" })]));
      ingestMessage(replicas[turn++ % 2]!.window, c.id, decodeJson(new TextEncoder().encode(body)));
      for (const r of replicas) await r.sweep.tick();
      await sender.tick();
    };
    for (let v = 100; v <= 200; v += 10) await push(v); // traffic
    for (let i = 0; i < 30; i++) await push(200); // quiet for 15 minutes
    expect(rx.got).toHaveLength(1);
    for (let v = 210; v <= 260; v += 10) await push(v); // traffic returns
    for (let i = 0; i < 30; i++) await push(260); // and stops again
    expect(rx.got).toHaveLength(2);
    expect(rx.got.map((g) => JSON.parse(g.body).data.collectorId)).toEqual([c.id, c.id]);
  });

  test("token.expiring: a usable token N hours (or a quarter of its life) before it expires, once; spent and revoked ones never", async () => {
    const rx = receiver();
    stops.push(rx.stop);
    const collectors = new Collectors(store);
    stops.push(() => collectors.close());
    const enrollment = new Enrollment(store, collectors);
    const DAY = 86_400;
    // Tokens are minted on the wall clock; the sweep's clock starts there and moves on.
    now = Date.now();
    const start = now;
    const window = new ThroughputWindow({ now: () => now });
    const sweep = new WebhookSweep(
      hooks,
      {
        stalls: new StallDetector(window, 5 * MINUTE),
        eachCollector: (visit) => collectors.each(visit),
        expiring: (at, withinMs, announce) => enrollment.expiring(at, withinMs, announce),
        tokenExpiringHours: 24,
      },
      logger,
      { now: () => now },
    );
    const usable = await enrollment.create(SYSTEM_ACTOR, { kind: "agent", expiresIn: 3 * DAY, maxUses: null, environment: "prod" });
    const revoked = await enrollment.create(SYSTEM_ACTOR, { kind: "agent", expiresIn: 3 * DAY });
    await enrollment.revoke(SYSTEM_ACTOR, revoked.enrollmentToken.id);
    const usedUp = await enrollment.create(SYSTEM_ACTOR, { kind: "agent", expiresIn: 3 * DAY, maxUses: 1 });
    expect(await enrollment.redeemAgent(usedUp.token)).not.toBeNull();
    // The default OpAMP token lives a day, as long as the default notice: announced when a quarter of its life is left.
    const opamp = await enrollment.create(SYSTEM_ACTOR, { kind: "opamp" });
    const hook = await hooks.create(SYSTEM_ACTOR, { url: rx.url, events: ["token.expiring"], secret: SECRET });

    const at = async (ms: number) => {
      now = start + ms;
      await sweep.tick();
      await sender.tick();
    };
    await at(17.9 * 3_600_000); // the OpAMP token: 6.1 hours left
    expect(rx.got).toHaveLength(0);
    await at(18.1 * 3_600_000); // 5.9 hours left
    await at(20 * 3_600_000);
    expect(rx.got).toHaveLength(1);
    expect(JSON.parse(rx.got[0]!.body)).toMatchObject({
      event: "token.expiring",
      data: { tokenId: opamp.enrollmentToken.id, kind: "opamp", expiresAt: opamp.enrollmentToken.expiresAt },
    });
    await at(47 * 3_600_000); // the agent token: 25 hours left
    expect(rx.got).toHaveLength(1);
    await at(49 * 3_600_000); // 23 hours left
    await at(50 * 3_600_000);
    await at(71 * 3_600_000);
    expect(rx.got).toHaveLength(2);
    expect(verify(SECRET, rx.got[1]!.signature, rx.got[1]!.body)).toBe(true);
    expect(JSON.parse(rx.got[1]!.body)).toMatchObject({
      event: "token.expiring",
      data: { tokenId: usable.enrollmentToken.id, kind: "agent", environment: "prod", expiresAt: usable.enrollmentToken.expiresAt },
    });
    expect((await hooks.deliveries(hook.id)).map((d) => d.status)).toEqual(["delivered", "delivered"]);
    // The mark stays out of the API's view of the token.
    expect((await enrollment.list(10)).items.find((t) => t.id === usable.enrollmentToken.id)).not.toHaveProperty("expiringNoticeAt");
  });

  test("nothing is swept, and no token marked, while no hook wants the event", async () => {
    const collectors = new Collectors(store);
    stops.push(() => collectors.close());
    const enrollment = new Enrollment(store, collectors);
    now = Date.now();
    let asked = 0;
    const sweep = new WebhookSweep(
      hooks,
      {
        stalls: new StallDetector(new ThroughputWindow({ now: () => now }), 5 * MINUTE),
        eachCollector: (visit) => collectors.each(visit),
        expiring: (at, withinMs, announce) => (asked++, enrollment.expiring(at, withinMs, announce)),
        tokenExpiringHours: 24,
      },
      logger,
      { now: () => now },
    );
    await enrollment.create(SYSTEM_ACTOR, { kind: "agent", expiresIn: 2 * 86_400 });
    await hooks.create(SYSTEM_ACTOR, { url: "https://example.com/x", events: ["rollout.paused"], secret: SECRET });
    now += 37 * 3_600_000; // 11 h left of a 2-day token: within a quarter of its life
    await sweep.tick();
    expect(asked).toBe(0);
    await hooks.create(SYSTEM_ACTOR, { url: "https://example.com/y", events: ["token.expiring"], secret: SECRET });
    await sweep.tick();
    expect(asked).toBe(1);
    expect(await store.count(QUEUE)).toBe(1);
  });
});
