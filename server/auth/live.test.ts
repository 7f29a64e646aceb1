/** LiveCredentials against a real SQLite store: deletes end, watched changes re-check, ends expire, resyncs re-read. */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { SqliteStore } from "../store/sqlite.ts";
import type { Store } from "../store/store.ts";
import { ENDED, LiveCredentials, tokenDoc } from "./live.ts";
import { hashToken } from "./tokens.ts";

let dir: string;
let store: SqliteStore;
let live: LiveCredentials;
const log = pino({ level: "silent" });

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "svc-live-"));
  store = new SqliteStore(join(dir, "state.db"));
  live = new LiveCredentials(store, log);
  await store.write([
    { op: "put", collection: "tokens", id: "d1", data: {} },
    { op: "put", collection: "users", id: "u1", data: { role: "admin" } },
  ]);
});
afterEach(async () => {
  live.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function ends() {
  const reasons: string[] = [];
  return { reasons, end: (reason: string) => void reasons.push(reason) };
}

test("deleting a document the credential stands on ends it once; a put does not", async () => {
  const { reasons, end } = ends();
  const hold = live.register({ standsOn: ["tokens/d1"] }, end);
  await store.write([{ op: "put", collection: "tokens", id: "d1", data: { again: true } }]);
  expect(reasons).toEqual([]);
  await store.write([{ op: "delete", collection: "tokens", id: "d1" }]);
  expect(reasons).toEqual([ENDED.revoked]);
  expect(hold.ended).toBe(true);
  expect(live.size).toBe(0);
});

test("a watched document's change re-runs the check, which ends the credential only when it fails", async () => {
  const { reasons, end } = ends();
  live.register(
    {
      standsOn: ["users/u1"],
      watches: ["users/u1"],
      check: async () => (await store.get<{ role: string }>("users", "u1"))?.data.role === "admin",
    },
    end,
  );
  await store.write([{ op: "put", collection: "users", id: "u1", data: { role: "admin", email: "new" } }]);
  await Bun.sleep(10);
  expect(reasons).toEqual([]);
  await store.write([{ op: "put", collection: "users", id: "u1", data: { role: "viewer" } }]);
  await Bun.sleep(10);
  expect(reasons).toEqual([ENDED.changed]);
});

test("a credential ends at its end time; one already past ends at once; release stops everything", async () => {
  const soon = ends();
  const hold = live.register({ standsOn: ["tokens/d1"], endsAt: Date.now() + 50 }, soon.end);
  const past = ends();
  live.register({ standsOn: [], endsAt: Date.now() - 1 }, past.end);
  const released = ends();
  live.register({ standsOn: ["tokens/d1"], endsAt: Date.now() + 50 }, released.end).release();
  await Bun.sleep(10);
  expect(past.reasons).toEqual([ENDED.expired]);
  expect(soon.reasons).toEqual([]);
  await Bun.sleep(80);
  expect(soon.reasons).toEqual([ENDED.expired]);
  expect(hold.ended).toBe(true);
  await store.write([{ op: "delete", collection: "tokens", id: "d1" }]);
  expect(released.reasons).toEqual([]);
});

test("standOn adds a document: deleting it ends the credential", async () => {
  const { reasons, end } = ends();
  const hold = live.register({ standsOn: ["tokens/d1"] }, end);
  hold.standOn("users/u1");
  await store.write([{ op: "delete", collection: "users", id: "u1" }]);
  expect(reasons).toEqual([ENDED.revoked]);
});

test("after a resync (changes may have been missed) every credential is read again from the store", async () => {
  // A feed that drops changes, as an external store's reconnecting feed may: only the resync gets through.
  let resync = () => {};
  const lossy: Store = Object.assign(Object.create(store) as Store, {
    watch: (_listener: unknown, onResync?: () => void) => ((resync = onResync ?? resync), () => {}),
  });
  const missed = new LiveCredentials(lossy, log);
  try {
    const gone = ends();
    const kept = ends();
    missed.register({ standsOn: ["tokens/d1"] }, gone.end);
    missed.register({ standsOn: ["users/u1"] }, kept.end);
    await store.write([{ op: "delete", collection: "tokens", id: "d1" }]);
    expect(gone.reasons).toEqual([]);
    resync();
    await Bun.sleep(20);
    expect(gone.reasons).toEqual([ENDED.revoked]);
    expect(kept.reasons).toEqual([]);
  } finally {
    missed.close();
  }
});

test("tokenDoc names a Bearer token's digest document", () => {
  expect(tokenDoc("svcct_abc")).toBe(`tokens/${hashToken("svcct_abc")}`);
});
