/**
 * The attribute index answers matchers (and narrows by tags) exactly as compileFilter's scan does: random fleets (tags, environment,
 * reports overlapping them, odd keys), random matchers, trust changed between rounds, records written through
 * the registry and behind its back (the view's change feed), every page compared, and the predicate a
 * publish's `match` scope uses.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { compileFilter, tagFilters } from "../../shared/collector-filter.ts";
import { COLLECTOR_STATUSES } from "../../shared/collector-status.ts";
import type { Collector } from "../../shared/collectors.ts";
import { Matcher, type MatchOperator } from "../../shared/matchers.ts";
import { SYSTEM_ACTOR } from "../audit/audit.ts";
import { SqliteStore } from "../store/sqlite.ts";
import { Collectors, COLLECTORS } from "./collectors.ts";

let store: SqliteStore;
let collectors: Collectors;
/** Deterministic: a failure replays. */
let seed = 1;
const random = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x80000000) as number;
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

const TAG_KEYS = ["team", "env", "rack", "environment", "__proto__", "constructor"];
const REPORTED_KEYS = ["team", "region", "host", "environment", "__proto__", "collector.name"];
const TRUSTABLE = ["team", "region", "host", "rack", "__proto__"];
const VALUES = ["", "a", "b", "ab", "prod", "eu-west"];
const PATTERNS = ["", ".*", ".+", "a.*", "a|b", "(a|)", "[ab]+", "eu-.*", "x", "c-1.*", "opamp"];
const NAMES = [...new Set([...TAG_KEYS, ...REPORTED_KEYS, "collector.id", "collector.name", "collector.mode", "missing"])];
const OPS: MatchOperator[] = ["=", "!=", "=~", "!~"];

function someOf(keys: readonly string[], most: number): Record<string, string> {
  const out: Record<string, string> = {};
  for (let n = Math.floor(random() * (most + 1)); n > 0; n--) out[pick(keys)] = pick(VALUES);
  return out;
}

function record(id: string): Collector {
  const reported = random() < 0.7 ? someOf(REPORTED_KEYS, 4) : undefined;
  return {
    id,
    name: `c-${Math.floor(random() * 20)}`,
    environment: random() < 0.5 ? null : pick(VALUES),
    managementMode: random() < 0.5 ? "opamp" : "rcfg-remotecfg",
    tags: someOf(TAG_KEYS, 3),
    ...(reported ? { reported } : {}),
    status: pick(COLLECTOR_STATUSES),
    lastSeen: null,
    health: null,
    createdAt: "",
    updatedAt: "",
  };
}

function matcher(): Matcher {
  const op = pick(OPS);
  const name = pick(NAMES);
  if (op === "=~" || op === "!~") return new Matcher(name, op, pick(PATTERNS));
  return new Matcher(name, op, name === "collector.mode" ? pick(["opamp", "rcfg-remotecfg"]) : name === "collector.name" ? "c-3" : pick(VALUES));
}

/** Every page of a walk, following cursors. */
async function pages(list: (after: string | undefined) => Promise<{ items: Collector[]; nextCursor: string | null }>): Promise<string[][]> {
  const out: string[][] = [];
  let after: string | undefined;
  for (;;) {
    const page = await list(after);
    out.push(page.items.map((c) => c.id));
    if (page.nextCursor === null) return out;
    after = page.nextCursor;
  }
}

beforeEach(() => {
  store = new SqliteStore(":memory:");
  collectors = new Collectors(store, ["host"]);
});
afterEach(async () => {
  collectors.close();
  await store.close();
});

test("the index answers random matchers over random fleets exactly as the scan does, page by page, through writes and trust changes", async () => {
  const ids = Array.from({ length: 400 }, (_, i) => `id-${String(i).padStart(4, "0")}-${Math.floor(random() * 1e6)}`);
  await store.write(ids.map((id) => ({ op: "put" as const, collection: COLLECTORS, id, data: record(id) })));
  await collectors.all();
  let compared = 0;
  for (let round = 0; round < 6; round++) {
    // Behind the registry's back (the view hears them on the feed), and through it.
    const rewritten = ids.filter(() => random() < 0.2);
    await store.write(
      rewritten.map((id) =>
        random() < 0.2 ? { op: "delete" as const, collection: COLLECTORS, id } : { op: "put" as const, collection: COLLECTORS, id, data: record(id) },
      ),
    );
    const present = (await collectors.allAcknowledged()).map((c) => c.id);
    for (const id of present.filter(() => random() < 0.05)) await collectors.report(SYSTEM_ACTOR, id, someOf(["team", "region", "host"], 3));
    for (const id of present.filter(() => random() < 0.05))
      await collectors.update(SYSTEM_ACTOR, id, { tags: someOf(TAG_KEYS, 3), environment: random() < 0.5 ? null : pick(VALUES) });
    await collectors.delete(SYSTEM_ACTOR, pick(present));
    await collectors.trust.set(
      SYSTEM_ACTOR,
      TRUSTABLE.filter(() => random() < 0.5),
      async () => {},
    );
    await collectors.allAcknowledged();

    for (let q = 0; q < 150; q++) {
      const matchers = Array.from({ length: 1 + Math.floor(random() * 3) }, matcher);
      const trusted = collectors.trust.keys();
      const status = random() < 0.3 ? pick(COLLECTOR_STATUSES) : undefined;
      const tags = random() < 0.3 ? [random() < 0.5 ? pick(TAG_KEYS) : `${pick(TAG_KEYS)}:${pick(VALUES)}`] : undefined;
      const limit = random() < 0.3 ? Number.POSITIVE_INFINITY : 1 + Math.floor(random() * 40);
      const scanned = await pages((after) => collectors.list(compileFilter({ match: matchers, trusted, status, tags }), limit, after));
      const indexed = await pages((after) => collectors.list(compileFilter({ status, tags }), limit, after, { matchers, tags: tagFilters(tags) }));
      const asked = { matchers: matchers.map(String), status, tags, limit };
      expect({ ...asked, pages: indexed }).toEqual({ ...asked, pages: scanned });
      // A publish's `match` scope: a predicate over the fleet.
      const fleet = await collectors.all();
      const selects = await collectors.selects(matchers);
      expect(fleet.filter(selects).map((c) => c.id)).toEqual(fleet.filter(compileFilter({ match: matchers, trusted })).map((c) => c.id));
      compared++;
    }
  }
  expect(compared).toBe(900);
});

test("a bulk tag edit by matchers selects what the scan selects, and the index follows the edit", async () => {
  for (let i = 0; i < 50; i++) await collectors.create(SYSTEM_ACTOR, { name: `c-${i}`, tags: i % 5 === 0 ? { team: "pay" } : { team: "search" } });
  const result = await collectors.editTags(SYSTEM_ACTOR, [new Matcher("team", "=", "pay")], { set: { rack: "r1" }, remove: [] }, {});
  expect(result).toEqual({ matched: 10, changed: 10 });
  const racked = await collectors.list(() => true, Number.POSITIVE_INFINITY, undefined, { matchers: [new Matcher("rack", "=~", "r.*")] });
  expect(racked.items.map((c) => c.name).sort()).toEqual(["c-0", "c-10", "c-15", "c-20", "c-25", "c-30", "c-35", "c-40", "c-45", "c-5"]);
  const rest = await collectors.list(() => true, Number.POSITIVE_INFINITY, undefined, { matchers: [new Matcher("rack", "!=", "r1")] });
  expect(rest.items).toHaveLength(40);
});
