/**
 * The attention lists answered from the sets kept beside the target index
 * (attention-sets.ts) equal a full recount over the stored targets, render
 * failures and collectors (the filter over every target the dashboard ran
 * before), after random sequences of target changes (failed, pinned,
 * drifted, current), render failures set and cleared, collector status and
 * health changes, deletes, writes of another replica, and a missed stretch
 * healed by a resync.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import type { Collector } from "../../shared/collectors.ts";
import { Collectors, COLLECTORS } from "../collectors/collectors.ts";
import { gated } from "../store/gated-feed.ts";
import { SqliteStore } from "../store/sqlite.ts";
import type { WriteOp } from "../store/store.ts";
import { Attention, type ConfigAttention } from "./attention.ts";
import { CONFIGS, RENDER_FAILURES, rolloutState, type CollectorConfig, type RenderFailure, type TargetDrift } from "./records.ts";
import { TargetIndex } from "./target-index.ts";
import { randomCollector, seeded } from "../testutil.ts";

const { random, pick } = seeded(11);
const randomness = { random, pick };

let store: SqliteStore;
beforeEach(() => {
  store = new SqliteStore(":memory:");
});
afterEach(() => store.close());

const IDS = Array.from({ length: 30 }, (_, i) => `c-${String(i).padStart(2, "0")}`);

function collector(id: string): Collector {
  return randomCollector(id, randomness, { name: `name-${id}-${Math.floor(random() * 3)}` });
}

function target(id: string): CollectorConfig {
  const state = pick(["current", "current", "failed", "applying", "outdated"] as const);
  const drift: TargetDrift | undefined =
    random() < 0.5
      ? ({ drifted: random() < 0.6, reason: random() < 0.5 ? "edited" : null, targetHash: "h", checkedAt: `t${Math.floor(random() * 9)}` } as TargetDrift)
      : undefined;
  return {
    collectorId: id,
    targetHash: "h",
    targetCommit: "c",
    targetSeq: 1,
    state,
    error: state === "failed" ? `broke ${Math.floor(random() * 9)}` : null,
    ...(random() < 0.2 ? { pinned: { at: "then", actor: pick(["ann", "bob"]) } } : {}),
    ...(drift ? { drift } : {}),
    updatedAt: "",
  };
}

/** What Attention answered before the sets: every stored target and render failure filtered, in id order. */
async function recount(): Promise<ConfigAttention> {
  const collectors = new Map((await store.list<Collector>(COLLECTORS)).map((d) => [d.id, d.data]));
  const out: ConfigAttention = { failed: [], pinned: [], drifted: [], unrenderable: [] };
  for (const { data: t } of await store.list<CollectorConfig>(CONFIGS)) {
    const c = collectors.get(t.collectorId);
    if (!c) continue;
    if (t.state === "failed") out.failed.push({ collectorId: c.id, name: c.name, error: t.error });
    if (t.pinned) out.pinned.push({ collectorId: c.id, name: c.name, ...t.pinned });
    if (t.state === "current" && t.drift?.drifted === true && rolloutState(c, t) === "current")
      out.drifted.push({ collectorId: c.id, name: c.name, reason: t.drift.reason ?? null, checkedAt: t.drift.checkedAt });
  }
  for (const { data: f } of await store.list<RenderFailure>(RENDER_FAILURES)) {
    const c = collectors.get(f.collectorId);
    if (c) out.unrenderable.push({ collectorId: c.id, name: c.name, error: f.error });
  }
  return out;
}

test("the attention lists equal a recount after random target, failure and collector writes, another replica's, and a resync", async () => {
  const { gate, wrapped, land } = gated(store);
  const collectors = new Collectors(wrapped);
  const index = new TargetIndex(wrapped);
  const attention = new Attention(index, collectors);
  await store.write(
    IDS.slice(0, 20).flatMap((id) => [
      { op: "put" as const, collection: COLLECTORS, id, data: collector(id) },
      { op: "put" as const, collection: CONFIGS, id, data: target(id) },
    ]),
  );
  expect(await attention.attention()).toEqual(await recount());

  for (let round = 0; round < 80; round++) {
    gate.mode = pick(["own", "own", "other", "cut"] as const);
    const ops: WriteOp[] = [];
    const touched = new Set<string>();
    for (let n = 1 + Math.floor(random() * 6); n > 0; n--) {
      const id = pick(IDS);
      const kind = pick(["collector", "target", "target", "failure", "deleteCollector", "deleteTarget", "deleteFailure"] as const);
      const key = `${kind.replace("delete", "").toLowerCase()}/${id}`;
      if (touched.has(key)) continue;
      touched.add(key);
      if (kind === "collector") ops.push({ op: "put", collection: COLLECTORS, id, data: collector(id) });
      else if (kind === "target") ops.push({ op: "put", collection: CONFIGS, id, data: target(id) });
      else if (kind === "failure")
        ops.push({
          op: "put",
          collection: RENDER_FAILURES,
          id,
          data: { collectorId: id, commit: "c", error: `cannot ${Math.floor(random() * 9)}`, at: "now" },
        });
      else {
        const collection = kind === "deleteCollector" ? COLLECTORS : kind === "deleteTarget" ? CONFIGS : RENDER_FAILURES;
        if (await store.get(collection, id)) ops.push({ op: "delete", collection, id });
      }
    }
    if (ops.length === 0) continue;
    await land(ops);
    const expected = await recount();
    expect(await attention.attention()).toEqual(expected);
    const summary = await attention.summary(3);
    for (const reason of ["failed", "pinned", "drifted", "unrenderable"] as const) {
      expect(summary[reason].count).toBe(expected[reason].length);
      expect(summary[reason].sample).toEqual(expected[reason].slice(0, 3) as never);
    }
  }
  index.close();
  collectors.close();
});
