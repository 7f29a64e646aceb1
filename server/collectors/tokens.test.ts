import { afterEach, describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hashToken } from "../auth/tokens.ts";
import { NotFoundError } from "../errors.ts";
import { Secrets } from "../secrets/secrets.ts";
import { SqliteStore } from "../store/sqlite.ts";
import { Collectors } from "./collectors.ts";
import { CollectorTokens } from "./tokens.ts";

const who = { actor: "sa:tester", remoteAddr: "127.0.0.1" };
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

const secrets = new Secrets([randomBytes(32)]);

async function open() {
  const dir = mkdtempSync(join(tmpdir(), "svc-ctok-"));
  const store = new SqliteStore(join(dir, "state.db"));
  const collectors = new Collectors(store);
  const tokens = new CollectorTokens(store, collectors, secrets);
  cleanups.push(async () => {
    tokens.close();
    collectors.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const collector = await collectors.create(who, { name: "edge", managementMode: "rcfg-remotecfg" });
  return { store, collectors, tokens, collector };
}

describe("collector tokens", () => {
  test("mint answers the token, stores its digest and the token sealed (never in the clear), and verify maps it to the collector", async () => {
    const { store, tokens, collector } = await open();
    expect(await tokens.has(collector.id)).toBe(false);
    const minted = await tokens.mint(who, collector.id);
    expect(minted).toEqual({ token: expect.stringMatching(/^svcct_[0-9A-Za-z]{43}$/), collectorId: collector.id, createdAt: expect.any(String) });
    expect(await tokens.has(collector.id)).toBe(true);
    expect(await tokens.verify(minted.token)).toBe(collector.id);
    expect(JSON.stringify(await store.list("tokens"))).not.toContain(minted.token);
    expect(JSON.stringify(await store.list("collector_tokens"))).not.toContain(minted.token.slice(6));
    expect(await store.get("tokens", hashToken(minted.token))).not.toBeNull();
    expect(await tokens.verify("svcct_unknown")).toBeNull();
    expect(await tokens.verify("svcen_" + minted.token.slice(6))).toBeNull();
    expect(await tokens.mint(who, "missing").catch((e) => e)).toBeInstanceOf(NotFoundError);
  });

  test("rotation kills the old token in the same write, here and in another instance on the same store", async () => {
    const { store, collectors, tokens, collector } = await open();
    const other = new CollectorTokens(store, collectors, secrets);
    cleanups.unshift(() => other.close());
    const first = await tokens.mint(who, collector.id);
    expect(await tokens.verify(first.token)).toBe(collector.id);
    expect(await other.verify(first.token)).toBe(collector.id);
    const second = await other.mint(who, collector.id);
    expect(await tokens.verify(first.token)).toBeNull();
    expect(await other.verify(first.token)).toBeNull();
    expect(await tokens.verify(second.token)).toBe(collector.id);
    expect(await store.list("tokens")).toHaveLength(1);
    const audit = await store.queryAudit({ action: "collector.token.rotate", limit: 10 });
    expect(audit.map((e) => e.details)).toEqual([{ replaced: true }, { replaced: false }]);
    expect(JSON.stringify(audit)).not.toContain(second.token);
  });

  test("of two concurrent rotations one wins and the other is a 409", async () => {
    const { tokens, collector } = await open();
    const results = await Promise.allSettled([tokens.mint(who, collector.id), tokens.mint(who, collector.id)]);
    const won = results.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    const lost = results.flatMap((r) => (r.status === "rejected" ? [r.reason] : []));
    expect(won).toHaveLength(1);
    expect(lost.map((e) => [e.status, e.code])).toEqual([[409, "token_rotated"]]);
    expect(await tokens.verify(won[0]!.token)).toBe(collector.id);
  });

  test("verify answers a known token from memory", async () => {
    const { store, tokens, collector } = await open();
    const { token } = await tokens.mint(who, collector.id);
    expect(await tokens.verify(token)).toBe(collector.id);
    const get = store.get.bind(store);
    const reads: string[] = [];
    store.get = (collection, id) => (reads.push(collection), get(collection, id));
    for (let i = 0; i < 3; i++) expect(await tokens.verify(token)).toBe(collector.id);
    expect(reads).toEqual([]);
  });

  test("a deleted collector's token stops working", async () => {
    const { collectors, tokens, collector } = await open();
    const { token } = await tokens.mint(who, collector.id);
    expect(await tokens.verify(token)).toBe(collector.id);
    await collectors.delete(who, collector.id);
    expect(await tokens.verify(token)).toBeNull();
  });

  test("current opens the stored token, in this instance and in a fresh one on the same store (a restart, another replica)", async () => {
    const { store, collectors, tokens, collector } = await open();
    expect(await tokens.current(collector.id)).toBeNull();
    const { token } = await tokens.mint(who, collector.id);
    expect(await tokens.current(collector.id)).toBe(token);
    const restarted = new CollectorTokens(store, collectors, secrets);
    cleanups.unshift(() => restarted.close());
    expect(await restarted.current(collector.id)).toBe(token);
    // Rotation elsewhere replaces what this instance holds.
    const rotated = await tokens.mint(who, collector.id);
    expect(await restarted.current(collector.id)).toBe(rotated.token);
    expect(rotated.token).not.toBe(token);
  });

  test("current: another server key cannot open it (SecretsError, no plaintext), and a sealed value moved to another collector does not open", async () => {
    const { store, collectors, tokens, collector } = await open();
    const { token } = await tokens.mint(who, collector.id);
    const stranger = new CollectorTokens(store, collectors, new Secrets([randomBytes(32)]));
    cleanups.unshift(() => stranger.close());
    const error = await stranger.current(collector.id).catch((e: Error) => e);
    expect(error).toBeInstanceOf(Error);
    expect(String(error)).not.toContain(token);
    const second = await collectors.create(who, { name: "edge-2", managementMode: "rcfg-remotecfg" });
    const doc = (await store.get<Record<string, string>>("collector_tokens", collector.id))!;
    await store.write([{ op: "put", collection: "collector_tokens", id: second.id, data: doc.data }]);
    expect(await tokens.current(second.id).catch((e: Error) => e.name)).toBe("SecretsError");
  });

  test("a token minted before tokens were sealed keeps verifying; current says there is none to offer", async () => {
    const { store, tokens, collector } = await open();
    const { token } = await tokens.mint(who, collector.id);
    const doc = (await store.get<Record<string, string>>("collector_tokens", collector.id))!;
    const { sealed: _, ...legacy } = doc.data;
    await store.write([{ op: "put", collection: "collector_tokens", id: collector.id, data: legacy }]);
    expect(await tokens.current(collector.id)).toBeNull();
    expect(await tokens.verify(token)).toBe(collector.id);
  });

  test("rotate listeners hear of every rotation, here or by another instance on the same store, until they unsubscribe", async () => {
    const { store, collectors, tokens, collector } = await open();
    const other = new CollectorTokens(store, collectors, secrets);
    cleanups.unshift(() => other.close());
    const heard: string[] = [];
    const stop = tokens.onRotate((id) => heard.push(id));
    await tokens.mint(who, collector.id);
    await other.mint(who, collector.id);
    stop();
    await tokens.mint(who, collector.id);
    expect(heard).toEqual([collector.id, collector.id]);
  });
});

describe("the metrics credential beside the control token", () => {
  test("each is its own kind, rotated on its own: one never verifies as the other, and rotating one leaves the other working", async () => {
    const { store, collectors, tokens, collector } = await open();
    const metrics = new CollectorTokens(store, collectors, secrets, "metrics");
    cleanups.unshift(() => metrics.close());
    const control = await tokens.mint(who, collector.id);
    const own = await metrics.mint(who, collector.id);
    expect(own.token).toMatch(/^svccm_[0-9A-Za-z]{43}$/);
    expect(await metrics.verify(own.token)).toBe(collector.id);
    expect(await tokens.verify(own.token)).toBeNull();
    expect(await metrics.verify(control.token)).toBeNull();
    // A metrics token's digest under the control kind's prefix is still refused: the record's kind is checked too.
    expect(await tokens.verify("svcct_" + own.token.slice(6))).toBeNull();

    const rotated = await tokens.mint(who, collector.id);
    expect(await tokens.verify(control.token)).toBeNull();
    expect(await tokens.verify(rotated.token)).toBe(collector.id);
    expect(await metrics.verify(own.token)).toBe(collector.id);
    expect(await metrics.current(collector.id)).toBe(own.token);

    const second = await metrics.mint(who, collector.id);
    expect(await metrics.verify(own.token)).toBeNull();
    expect(await metrics.verify(second.token)).toBe(collector.id);
    expect(await tokens.verify(rotated.token)).toBe(collector.id);
    expect(JSON.stringify(await store.list("collector_metrics_tokens"))).not.toContain(second.token.slice(6));
    const audit = await store.queryAudit({ action: "collector.metrics-token.rotate", limit: 10 });
    expect(audit.map((e) => e.details)).toEqual([{ replaced: true }, { replaced: false }]);

    await collectors.delete(who, collector.id);
    expect(await metrics.verify(second.token)).toBeNull();
  });
});
