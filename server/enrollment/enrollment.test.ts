import { afterEach, describe, expect, setSystemTime, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hashToken } from "../auth/tokens.ts";
import { Collectors } from "../collectors/collectors.ts";
import { NotFoundError, ValidationError } from "../errors.ts";
import { SqliteStore } from "../store/sqlite.ts";
import { Enrollment } from "./enrollment.ts";

const who = { actor: "sa:tester", remoteAddr: "127.0.0.1" };
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  setSystemTime();
  for (const fn of cleanups.splice(0)) await fn();
});

function open() {
  const dir = mkdtempSync(join(tmpdir(), "svc-enroll-"));
  const store = new SqliteStore(join(dir, "state.db"));
  const collectors = new Collectors(store);
  cleanups.push(async () => {
    collectors.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return { store, collectors, enrollment: new Enrollment(store, collectors) };
}

describe("enrollment tokens", () => {
  test("the token is answered once and stored only as its digest; list shows state, never the secret", async () => {
    const { store, enrollment } = open();
    const { token, enrollmentToken } = await enrollment.create(who, { kind: "opamp", environment: "prod" });
    expect(token).toMatch(/^svcen_[0-9A-Za-z]{43}$/);
    expect(enrollmentToken).toMatchObject({
      kind: "opamp",
      environment: "prod",
      maxUses: 1,
      uses: 0,
      boundInstanceUid: null,
      collectorId: null,
      createdBy: "sa:tester",
      revokedAt: null,
    });
    const hoursLeft = (Date.parse(enrollmentToken.expiresAt) - Date.now()) / 3_600_000;
    expect(hoursLeft).toBeCloseTo(24, 1);
    expect((await enrollment.list(100)).items).toEqual([enrollmentToken]);
    const stored = JSON.stringify([await store.list("enrollment_tokens"), await store.list("tokens")]);
    expect(stored).not.toContain(token);
    expect(stored).toContain(hashToken(token));
    expect(JSON.stringify((await enrollment.list(100)).items)).not.toContain(hashToken(token));
    const [audit] = await store.queryAudit({ action: "enrollment.create", limit: 1 });
    expect(audit).toMatchObject({ actor: "sa:tester", resourceId: enrollmentToken.id, details: { kind: "opamp", maxUses: 1 } });
    expect(JSON.stringify(audit)).not.toContain(token);
  });

  test("opamp tokens are single-use; agent tokens default to one use and a week", async () => {
    const { enrollment } = open();
    const error = await enrollment.create(who, { kind: "opamp", maxUses: 2 }).catch((e) => e);
    expect(error).toBeInstanceOf(ValidationError);
    expect(error.details).toEqual([{ path: "maxUses", message: expect.stringContaining("1") }]);
    expect(await enrollment.create(who, { kind: "opamp", maxUses: null }).catch((e) => e.details[0].path)).toBe("maxUses");
    const { enrollmentToken } = await enrollment.create(who, { kind: "agent" });
    expect(enrollmentToken.maxUses).toBe(1);
    expect((Date.parse(enrollmentToken.expiresAt) - Date.now()) / 86_400_000).toBeCloseTo(7, 1);
    expect(await enrollment.create(who, { kind: "agent", collectorId: "x" }).catch((e) => e.details[0].path)).toBe("collectorId");
    expect(await enrollment.create(who, { kind: "agent", expiresIn: 366 * 86_400 }).catch((e) => e.details[0].path)).toBe("expiresIn");
  });

  test("a pre-bound token names an existing collector", async () => {
    const { collectors, enrollment } = open();
    expect(await enrollment.create(who, { kind: "opamp", collectorId: "nope" }).catch((e) => e)).toBeInstanceOf(NotFoundError);
    const collector = await collectors.create(who, { name: "edge" });
    const { token } = await enrollment.create(who, { kind: "opamp", collectorId: collector.id });
    expect(await enrollment.redeemOpamp(token, "uid-1")).toMatchObject({ collectorId: collector.id });
  });

  test("the first instance binds an opamp token; it may come back, any other instance may not", async () => {
    const { enrollment } = open();
    const { token, enrollmentToken } = await enrollment.create(who, { kind: "opamp", environment: "staging" });
    const grant = { tokenId: enrollmentToken.id, collectorId: null, environment: "staging" };
    expect(await enrollment.redeemOpamp(token, "uid-a")).toEqual(grant);
    expect(await enrollment.redeemOpamp(token, "uid-a")).toEqual(grant);
    expect(await enrollment.redeemOpamp(token, "uid-b")).toBeNull();
    expect((await enrollment.list(100)).items[0]).toMatchObject({ uses: 1, boundInstanceUid: "uid-a" });
    expect(await enrollment.redeemAgent(token)).toBeNull();
    expect(await enrollment.redeemOpamp(token.slice(0, -1) + (token.endsWith("a") ? "b" : "a"), "uid-a")).toBeNull();
    expect(await enrollment.redeemOpamp("svcsa_whatever", "uid-a")).toBeNull();
  });

  test("of concurrent first contacts exactly one wins", async () => {
    const { enrollment } = open();
    const { token } = await enrollment.create(who, { kind: "opamp" });
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => enrollment.redeemOpamp(token, `uid-${i}`)));
    const winners = results.flatMap((r, i) => (r === null ? [] : [`uid-${i}`]));
    expect(winners).toHaveLength(1);
    expect((await enrollment.list(100)).items[0]).toMatchObject({ uses: 1, boundInstanceUid: winners[0] });
  });

  test("bindCollector records the collector once; a reconnect maps to it", async () => {
    const { enrollment } = open();
    const { token, enrollmentToken } = await enrollment.create(who, { kind: "opamp" });
    await enrollment.redeemOpamp(token, "uid-a");
    await enrollment.bindCollector(enrollmentToken.id, "c-1");
    await enrollment.bindCollector(enrollmentToken.id, "c-1");
    expect(await enrollment.redeemOpamp(token, "uid-a")).toMatchObject({ collectorId: "c-1" });
    expect(await enrollment.bindCollector(enrollmentToken.id, "c-2").catch((e) => e.code)).toBe("enrollment_token_bound");
    expect(await enrollment.bindCollector("missing", "c-1").catch((e) => e)).toBeInstanceOf(NotFoundError);
  });

  test("expiry bounds the first use only: an expired token enrolls no instance, while the instance it is bound to keeps it until it is revoked", async () => {
    const { enrollment } = open();
    const { token, enrollmentToken } = await enrollment.create(who, { kind: "opamp", expiresIn: 60 });
    const unused = await enrollment.create(who, { kind: "opamp", expiresIn: 60 });
    expect(await enrollment.redeemOpamp(token, "uid-a")).not.toBeNull();
    expect((await enrollment.opampToken(token))?.expiresAt).toBeNull();
    setSystemTime(new Date(Date.now() + 61_000));
    expect(await enrollment.redeemOpamp(unused.token, "uid-b")).toBeNull();
    expect(await enrollment.usableForOpamp(unused.token)).toBe(false);
    expect(await enrollment.redeemOpamp(token, "uid-a")).not.toBeNull();
    expect(await enrollment.redeemOpamp(token, "uid-b")).toBeNull();
    expect(await enrollment.usableForOpamp(token)).toBe(true);
    // Not pruned as spent, however long ago it expired.
    expect(await enrollment.prune(new Date(Date.now() + 365 * 86_400_000))).toBe(1);
    expect(await enrollment.redeemOpamp(token, "uid-a")).not.toBeNull();
    await enrollment.revoke(who, enrollmentToken.id);
    expect(await enrollment.redeemOpamp(token, "uid-a")).toBeNull();
  });

  test("a revoked token is refused at once and stays listed", async () => {
    const { store, enrollment } = open();
    const { token, enrollmentToken } = await enrollment.create(who, { kind: "agent", maxUses: null });
    expect(await enrollment.redeemAgent(token)).not.toBeNull();
    await enrollment.revoke(who, enrollmentToken.id);
    await enrollment.revoke(who, enrollmentToken.id);
    expect(await enrollment.redeemAgent(token)).toBeNull();
    expect(await store.get("tokens", hashToken(token))).toBeNull();
    expect((await enrollment.list(100)).items[0]!.revokedAt).not.toBeNull();
    expect(await store.queryAudit({ action: "enrollment.revoke", limit: 10 })).toHaveLength(1);
    expect(await enrollment.revoke(who, "missing").catch((e) => e)).toBeInstanceOf(NotFoundError);
  });

  test("agent tokens count uses up to maxUses, also when redeemed concurrently; null is unlimited", async () => {
    const { enrollment } = open();
    const { token, enrollmentToken } = await enrollment.create(who, { kind: "agent", maxUses: 3, environment: "lab" });
    const results = await Promise.all(Array.from({ length: 5 }, () => enrollment.redeemAgent(token)));
    expect(results.filter((r) => r !== null)).toEqual(Array(3).fill({ tokenId: enrollmentToken.id, environment: "lab" }));
    expect(await enrollment.redeemAgent(token)).toBeNull();
    expect(await enrollment.redeemOpamp(token, "uid-a")).toBeNull();
    const unlimited = await enrollment.create(who, { kind: "agent", maxUses: null });
    for (let i = 0; i < 20; i++) expect(await enrollment.redeemAgent(unlimited.token)).not.toBeNull();
    expect((await enrollment.list(100)).items[1]!.uses).toBe(20);
  });

  test("the list pages oldest first; spent tokens are pruned after 30 days with their digests, live ones kept", async () => {
    const { store, enrollment } = open();
    const expired = await enrollment.create(who, { kind: "opamp", expiresIn: 60 });
    const revoked = await enrollment.create(who, { kind: "agent" });
    await enrollment.revoke(who, revoked.enrollmentToken.id);
    const live = await enrollment.create(who, { kind: "agent", expiresIn: 365 * 86_400 });
    const first = await enrollment.list(2);
    expect(first.items.map((t) => t.id)).toEqual([expired.enrollmentToken.id, revoked.enrollmentToken.id]);
    const second = await enrollment.list(2, first.nextCursor!);
    expect(second).toEqual({ items: [live.enrollmentToken], nextCursor: null });

    expect(await enrollment.prune(new Date(Date.now() + 29 * 86_400_000))).toBe(0);
    expect(await enrollment.prune(new Date(Date.now() + 31 * 86_400_000))).toBe(2);
    expect((await enrollment.list(100)).items.map((t) => t.id)).toEqual([live.enrollmentToken.id]);
    expect(await store.get("tokens", hashToken(expired.token))).toBeNull();
    expect(await store.get("tokens", hashToken(live.token))).not.toBeNull();
    expect(await store.queryAudit({ action: "enrollment.prune", limit: 10 })).toHaveLength(2);
  });
});

describe("expiring tokens", () => {
  const due = async (enrollment: Enrollment, at: Date, withinMs = 86_400_000) => {
    const ids: string[] = [];
    await enrollment.expiring(at, withinMs, async (t) => void ids.push(t.id));
    return ids;
  };

  test("each usable token is announced until one replica's mark lands; an unbound opamp token counts", async () => {
    const { store, collectors, enrollment } = open();
    const replicaB = new Enrollment(store, collectors);
    const week = await enrollment.create(who, { kind: "opamp", expiresIn: 7 * 86_400 });
    const bound = await enrollment.create(who, { kind: "opamp", expiresIn: 7 * 86_400 });
    expect(await enrollment.redeemOpamp(bound.token, "instance-1")).not.toBeNull();
    const later = new Date(Date.now() + 6.5 * 86_400_000);
    const [a, b] = await Promise.all([due(enrollment, later), due(replicaB, later)]);
    // Both may announce it (the event key dedupes); after that it is marked.
    expect([...new Set([...a, ...b])]).toEqual([week.enrollmentToken.id]);
    expect(await due(enrollment, later)).toEqual([]);
    // Too early: more than the threshold left.
    const other = await enrollment.create(who, { kind: "agent", expiresIn: 7 * 86_400 });
    expect(await due(enrollment, new Date(Date.now() + 5 * 86_400_000))).toEqual([]);
    expect(await due(enrollment, later)).toEqual([other.enrollmentToken.id]);
  });

  test("a token living no longer than the notice is announced when a quarter of its life is left: the default OpAMP token, 6 h before", async () => {
    const { enrollment } = open();
    const token = await enrollment.create(who, { kind: "opamp" }); // DEFAULT_EXPIRES_IN: a day
    const start = Date.parse(token.enrollmentToken.createdAt);
    expect(await due(enrollment, new Date(start + 17.9 * 3_600_000))).toEqual([]);
    expect(await due(enrollment, new Date(start + 18.1 * 3_600_000))).toEqual([token.enrollmentToken.id]);
  });

  test("a token is marked only after its announcement is queued: a failure in between announces it again", async () => {
    const { enrollment } = open();
    const token = await enrollment.create(who, { kind: "agent", expiresIn: 7 * 86_400 });
    const later = new Date(Date.now() + 6.5 * 86_400_000);
    const crash = enrollment.expiring(later, 86_400_000, async () => {
      throw new Error("the queue write failed");
    });
    await expect(crash).rejects.toThrow("the queue write failed");
    expect(await due(enrollment, later)).toEqual([token.enrollmentToken.id]);
    expect(await due(enrollment, later)).toEqual([]);
  });
});
