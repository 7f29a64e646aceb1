/**
 * The sessions on their own: the instances per collector that pushes fan out
 * to, the refused sessions held open before their close, and the idle sweep.
 * Sessions are recorded connections; no server, no socket.
 */
import { describe, expect, test } from "bun:test";
import { ServerErrorResponseType } from "../gen/opamp/v1/opamp_pb.ts";
import type { LiveHold } from "../auth/live.ts";
import type { Credential } from "./credential.ts";
import { Sessions, type Instance } from "./sessions.ts";
import { instance, recordedSession } from "../../test/opamp/helpers.ts";

const credential: Credential = { kind: "collector", collectorId: "c1", token: "svcct_c1" };

/** An open session of this process, with a live hold whose releases are counted. */
function opened(sessions: Sessions) {
  const recorded = recordedSession(credential);
  const hold = { ended: false, releases: 0, standOn: () => {}, release: () => void hold.releases++ };
  recorded.session.hold = hold satisfies LiveHold;
  sessions.opened(recorded.session);
  return { ...recorded, hold };
}

const uids = (set: ReadonlySet<Instance>) => [...set].map((i) => i.uid).sort();

describe("fan-out", () => {
  test("attached sessions are listed per collector until they close; a close releases the session's live hold", () => {
    const sessions = new Sessions();
    const [a, b, c] = [opened(sessions), opened(sessions), opened(sessions)];
    const [one, two, three] = [instance("u1", "c1"), instance("u2", "c1"), instance("u3", "c2")];
    sessions.attach(a.session, one);
    sessions.attach(b.session, two);
    sessions.attach(c.session, three);
    expect(uids(sessions.connected("c1"))).toEqual(["u1", "u2"]);
    expect([...sessions.collectors()].sort()).toEqual(["c1", "c2"]);
    expect(one.session).toBe(a.session);

    sessions.closed(a.session);
    expect(a.session.closed).toBe(true);
    expect(a.hold.releases).toBe(1);
    expect(one.session).toBeNull();
    expect(uids(sessions.connected("c1"))).toEqual(["u2"]);
    sessions.closed(b.session);
    expect(sessions.hasCollector("c1")).toBe(false);
    expect(sessions.connected("c1").size).toBe(0);
    expect(sessions.hasCollector("c2")).toBe(true);
    expect(sessions.size).toBe(1);
  });

  test("an instance that reconnects is sent everything again, and the old session's late close does not detach the new one", () => {
    const sessions = new Sessions();
    const [old, fresh] = [opened(sessions), opened(sessions)];
    const one = instance("u1", "c1");
    sessions.attach(old.session, one);
    one.sentHash = "h1";
    one.sentSettings = "s1";
    sessions.attach(fresh.session, one);
    expect(one.sentHash).toBeNull();
    expect(one.sentSettings).toBeNull();
    sessions.closed(old.session);
    expect(one.session).toBe(fresh.session);
    expect(uids(sessions.connected("c1"))).toEqual(["u1"]);
  });

  test("stop closes every open session as the server shutting down", () => {
    const sessions = new Sessions();
    const [a, b] = [opened(sessions), opened(sessions)];
    sessions.stop();
    expect(a.closes).toEqual([[1001, "server shutting down"]]);
    expect(b.closes).toEqual([[1001, "server shutting down"]]);
    expect(sessions.size).toBe(0);
  });
});

describe("held sessions", () => {
  const refusedUid = new Uint8Array(16).fill(7);

  test("a refused session is told to retry after the hold time, ignored, and closed with 1008 when the time is up", async () => {
    const sessions = new Sessions({ refusedHoldSeconds: 0.05 });
    const a = opened(sessions);
    sessions.hold(a.session, refusedUid, "bound to another instance");
    expect(a.session.closed).toBe(true);
    expect(a.sent).toHaveLength(1);
    const [told] = a.sent;
    expect(told!.instanceUid).toEqual(refusedUid);
    expect(told!.errorResponse?.type).toBe(ServerErrorResponseType.ServerErrorResponseType_Unavailable);
    expect(told!.errorResponse?.errorMessage).toBe("bound to another instance");
    expect(told!.errorResponse?.Details).toEqual({ case: "retryInfo", value: expect.objectContaining({ retryAfterNanoseconds: 50_000_000n }) });
    expect(a.closes).toEqual([]);
    expect(sessions.heldCount).toBe(1);

    await Bun.sleep(120);
    expect(a.closes).toEqual([[1008, "bound to another instance"]]);
    expect(sessions.heldCount).toBe(0);
  });

  test("past maxHeldSessions a refused session is closed at once; one that closes while held is not closed again", async () => {
    const sessions = new Sessions({ refusedHoldSeconds: 0.05, maxHeldSessions: 1 });
    const [a, b] = [opened(sessions), opened(sessions)];
    sessions.hold(a.session, refusedUid, "refused");
    sessions.hold(b.session, refusedUid, "refused");
    expect(b.sent).toEqual([]);
    expect(b.closes).toEqual([[1008, "refused"]]);
    expect(sessions.heldCount).toBe(1);

    sessions.closed(a.session);
    expect(sessions.heldCount).toBe(0);
    await Bun.sleep(120);
    expect(a.closes).toEqual([]);
  });
});

describe("HTTP reports refused as too large", () => {
  test("held for the hold time for that instance and credential only, then due once; bounded by maxHeldSessions", async () => {
    const sessions = new Sessions({ refusedHoldSeconds: 0.05, maxHeldSessions: 1 });
    const other: Credential = { kind: "collector", collectorId: "c1", token: "svcct_other" };
    expect(sessions.reportHold("u1", credential)).toBeNull();
    sessions.holdReports("u1", credential);
    expect(sessions.reportHold("u1", credential)).toBe("held");
    expect(sessions.reportHold("u1", other)).toBeNull();
    expect(sessions.reportHold("u2", credential)).toBeNull();
    sessions.holdReports("u2", credential);
    expect(sessions.reportHold("u2", credential)).toBeNull();

    await Bun.sleep(80);
    expect(sessions.reportHold("u1", credential)).toBe("due");
    expect(sessions.reportHold("u1", credential)).toBeNull();
  });
});

describe("idle sweep", () => {
  test("from start to stop, instances with no session and nothing heard within the idle time are forgotten", async () => {
    const sessions = new Sessions({ idleInstanceSeconds: 0.3 });
    const longAgo = Date.now() - 60_000;
    const [quiet, polling, connected] = [instance("quiet", "c1", longAgo), instance("polling", "c1", longAgo), instance("connected", "c1", longAgo)];
    for (const i of [quiet, polling, connected]) sessions.remember(i);
    sessions.attach(opened(sessions).session, connected);
    sessions.start();
    await Bun.sleep(200);
    polling.seenAt = Date.now();
    await Bun.sleep(200);
    expect(sessions.instance("quiet")).toBeUndefined();
    expect(sessions.instance("polling")).toBe(polling);
    expect(sessions.instance("connected")).toBe(connected);
    expect(sessions.instanceCount).toBe(2);

    sessions.stop();
    sessions.remember(instance("after", "c1", longAgo));
    await Bun.sleep(400);
    expect(sessions.instance("after")).toBeDefined();
  });
});
