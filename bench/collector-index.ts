/**
 * `GET /collectors?match=` at fleet scale, its own cost (issue 36 item 4): the
 * matchers answered by walking the view (compileFilter's predicate, as the list
 * did before the attribute index) and from the index (Collectors.list with
 * matchers, as it does now), in one process, no HTTP, no other load.
 *
 * Seeds N collector records into an in-memory SQLite store, each reporting
 * env, region and team (trusted, as bench/fleet.ts trusts them) and named
 * `fleet-i`, loads the registry, then for each case times one request as the
 * route runs it (parse, refuse untrusted keys, compile the filter, list the
 * first page of 100) `runs` times per mode, or until 5 s are spent. Also
 * prints the index's heap per collector.
 *
 * Usage: bun bench/collector-index.ts [collectors=100000] [runs=200]
 */
import { compileFilter } from "../shared/collector-filter.ts";
import type { Collector } from "../shared/collectors.ts";
import { parseMatcherList } from "../shared/matchers.ts";
import { AttributeIndex } from "../server/collectors/attribute-index.ts";
import { Collectors, COLLECTORS } from "../server/collectors/collectors.ts";
import { SqliteStore } from "../server/store/sqlite.ts";
import { percentile } from "./lib.ts";

const [count = 100_000, runs = 200] = process.argv.slice(2).map(Number);
const REGIONS = ["us-east", "us-west", "eu-west", "eu-north", "ap-south"];
const TEAMS = ["payments", "search", "ingest", "edge"];
/** Longest one mode of one case runs. */
const CASE_MS = 5000;

const store = new SqliteStore(":memory:");
const now = new Date().toISOString();
for (let at = 0; at < count; at += 1000) {
  const ops = [];
  for (let i = at; i < Math.min(count, at + 1000); i++) {
    const h = Math.imul(i + 1, 2654435761) >>> 0;
    const id = Bun.randomUUIDv7();
    const data: Collector = {
      id,
      name: `fleet-${i}`,
      environment: null,
      managementMode: i % 2 === 0 ? "opamp" : "rcfg-remotecfg",
      tags: {},
      reported: { env: (h >>> 5) % 3 === 0 ? "prod" : "staging", region: REGIONS[h % 5]!, team: TEAMS[(h >>> 8) % 4]! },
      status: "pending",
      lastSeen: null,
      health: null,
      createdAt: now,
      updatedAt: now,
    };
    ops.push({ op: "put" as const, collection: COLLECTORS, id, data });
  }
  await store.write(ops);
}
const collectors = new Collectors(store, ["env", "region", "team"]);
const fleet = await collectors.all();

// What the index costs in memory: a second one built over the same records, the heap measured around it.
Bun.gc(true);
const heapBefore = process.memoryUsage().heapUsed;
const second = new AttributeIndex();
for (const c of fleet) second.put(c);
Bun.gc(true);
console.log(`attribute index: ${((process.memoryUsage().heapUsed - heapBefore) / second.size).toFixed(0)} bytes of heap per collector`);

const CASES: [label: string, match: string[], limit: number][] = [
  ["region, 1 in 5", ['region="eu-west"'], 100],
  ["env and a team regex (bench/fleet.ts)", ["env=prod", 'team=~"pay.*"'], 100],
  ["one collector by name", ['collector.name="fleet-99999"'], 100],
  ["nobody (the whole fleet walked)", ['team="nobody"'], 100],
  ["two negations", ["env!=prod", 'region!~"us-.*"'], 100],
  ["a regex on 100,000 distinct names", ['collector.name=~"fleet-4242.*"'], 100],
  ["region, every page (/matchers/preview)", ['region="eu-west"'], Number.POSITIVE_INFINITY],
];

/** One request as the route runs it; `indexed`: the matchers answered from the index, else in the predicate. */
async function request(match: string[], limit: number, indexed: boolean): Promise<number> {
  const matchers = parseMatcherList(match, "match");
  await collectors.refuseUntrusted(
    matchers.map((m) => m.name),
    "match",
  );
  const trusted = collectors.trust.keys();
  const page = indexed
    ? await collectors.list(compileFilter({}), limit, undefined, { matchers })
    : await collectors.list(compileFilter({ match: matchers, trusted }), limit);
  return page.items.length;
}

console.log(`collectors: ${count}, runs per case and mode: up to ${runs} (or ${CASE_MS / 1000} s)`);
for (const [label, match, limit] of CASES) {
  const line: string[] = [];
  let found = -1;
  for (const indexed of [false, true]) {
    await request(match, limit, indexed); // warm-up
    const times: number[] = [];
    const start = performance.now();
    while (times.length < runs && performance.now() - start < CASE_MS) {
      const t0 = performance.now();
      const items = await request(match, limit, indexed);
      times.push(performance.now() - t0);
      if (found >= 0 && items !== found) throw new Error(`${label}: the index answered ${items} items, the scan ${found}`);
      found = items;
    }
    times.sort((a, b) => a - b);
    line.push(`${indexed ? "index" : "scan"} p50 ${percentile(times, 50).toFixed(2)} ms, p99 ${percentile(times, 99).toFixed(2)} ms (${times.length} runs)`);
  }
  console.log(`${label} (${match.join(", ")}; ${found} items): ${line.join("; ")}`);
}
collectors.close();
await store.close();
