import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hashToken } from "../auth/tokens.ts";
import { NotFoundError } from "../errors.ts";
import { SqliteStore } from "../store/sqlite.ts";
import { Collectors } from "./collectors.ts";
import { CollectorTokens } from "./tokens.ts";

const who = { actor: "sa:tester", remoteAddr: "127.0.0.1" };
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0)) await fn();
});

async function open() {
  const dir = mkdtempSync(join(tmpdir(), "svc-ctok-"));
  const store = new SqliteStore(join(dir, "state.db"));
  const collectors = new Collectors(store);
  const tokens = new CollectorTokens(store, collectors);
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
  test("mint answers the token once, stores its digest only, and verify maps it to the collector", async () => {
    const { store, tokens, collector } = await open();
    expect(await tokens.has(collector.id)).toBe(false);
    const minted = await tokens.mint(who, collector.id);
    expect(minted).toEqual({ token: expect.stringMatching(/^svcct_[0-9A-Za-z]{43}$/), collectorId: collector.id, createdAt: expect.any(String) });
    expect(await tokens.has(collector.id)).toBe(true);
    expect(await tokens.verify(minted.token)).toBe(collector.id);
    expect(JSON.stringify(await store.list("tokens"))).not.toContain(minted.token);
    expect(await store.get("tokens", hashToken(minted.token))).not.toBeNull();
    expect(await tokens.verify("svcct_unknown")).toBeNull();
    expect(await tokens.verify("svcen_" + minted.token.slice(6))).toBeNull();
    expect(await tokens.mint(who, "missing").catch((e) => e)).toBeInstanceOf(NotFoundError);
  });

  test("rotation kills the old token in the same write, here and in another instance on the same store", async () => {
    const { store, collectors, tokens, collector } = await open();
    const other = new CollectorTokens(store, collectors);
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

  test("rotate listeners get the new plaintext until they unsubscribe", async () => {
    const { tokens, collector } = await open();
    const heard: [string, string][] = [];
    const stop = tokens.onRotate((id, token) => heard.push([id, token]));
    const { token } = await tokens.mint(who, collector.id);
    stop();
    await tokens.mint(who, collector.id);
    expect(heard).toEqual([[collector.id, token]]);
  });
});
