/**
 * `GET /dashboard` at fleet scale, its own cost (issue 36 item 3): one refresh
 * as the route runs it (server/api/dashboard.ts `dashboard`), in one process,
 * no HTTP, no other load. Before the counters a refresh walked every
 * collector, built the latest fleet rollout's whole status and filtered every
 * target; run this file from a checkout of the commit before them (it builds
 * the same pieces) to time that.
 *
 * Seeds N collectors, each with a target of one fleet publish (the latest,
 * everyone written), into a SQLite file: 1 in 50 offline, 1 in 40 reporting
 * only, 1 in 100 failed, 1 in 200 drifted, 1 in 500 pinned, 1 in 1,000
 * unrenderable. Loads the collector view and the target index, then times
 * `runs` refreshes and prints their p50 and max and the event loop's longest
 * hold (one refresh is one await chain: its synchronous parts hold the loop).
 * The first refresh is printed apart: it builds what later ones keep.
 *
 * Usage: bun bench/dashboard.ts [collectors=100000] [runs=20]
 */
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Collector } from "../shared/collectors.ts";
import { dashboard } from "../server/api/dashboard.ts";
import { Collectors, COLLECTORS } from "../server/collectors/collectors.ts";
import { Attention } from "../server/rollout/attention.ts";
import { TargetHistory } from "../server/rollout/history.ts";
import { CONFIGS, LATEST_FLEET, RENDER_FAILURES, ROLLOUTS, WRITES, type CollectorConfig, type Rollout } from "../server/rollout/records.ts";
import { StagedRollouts } from "../server/rollout/staged.ts";
import { TargetIndex } from "../server/rollout/target-index.ts";
import { SqliteStore } from "../server/store/sqlite.ts";
import type { WriteOp } from "../server/store/store.ts";
import { Telemetry } from "../server/telemetry/index.ts";
import { percentile } from "./lib.ts";

const [count = 100_000, runs = 20] = process.argv.slice(2).map(Number);
const file = join(tmpdir(), `bench-dashboard-${process.pid}.db`);
const store = new SqliteStore(file);
const now = new Date().toISOString();
const rolloutId = Bun.randomUUIDv7();
const ids: string[] = [];
const seedStart = performance.now();
for (let at = 0; at < count; at += 1000) {
  const ops: WriteOp[] = [];
  for (let i = at; i < Math.min(count, at + 1000); i++) {
    const id = Bun.randomUUIDv7();
    ids.push(id);
    const collector: Collector = {
      id,
      name: `fleet-${i}`,
      environment: null,
      managementMode: i % 2 === 0 ? "opamp" : "rcfg-remotecfg",
      tags: {},
      status: i % 50 === 0 ? "offline" : "online",
      lastSeen: now,
      health: { channel: "opamp", intervalSeconds: 30, healthy: true, error: null, acceptsRemoteConfig: i % 40 !== 1 },
      createdAt: now,
      updatedAt: now,
    };
    const failed = i % 100 === 3;
    const target: CollectorConfig = {
      collectorId: id,
      targetHash: `hash-${i}`,
      targetCommit: "c1",
      targetSeq: 1,
      state: failed ? "failed" : "current",
      error: failed ? "exporter otlphttp: invalid endpoint" : null,
      ...(i % 500 === 7 ? { pinned: { at: now, actor: "ann" } } : {}),
      ...(i % 200 === 5 ? { drift: { drifted: true, reason: "edited by hand", targetHash: `hash-${i}`, checkedAt: now } as CollectorConfig["drift"] } : {}),
      rolloutId,
      targetAt: now,
      updatedAt: now,
    };
    ops.push({ op: "put", collection: COLLECTORS, id, data: collector }, { op: "put", collection: CONFIGS, id, data: target });
    if (i % 1000 === 9) ops.push({ op: "put", collection: RENDER_FAILURES, id, data: { collectorId: id, commit: "c1", error: "no value for env", at: now } });
  }
  await store.write(ops);
}
const rollout: Rollout = { id: rolloutId, kind: "publish", commit: "c1", actor: "ann", startedAt: now, scope: "fleet", collectorIds: ids, changed: ids };
await store.write([
  { op: "put", collection: ROLLOUTS, id: rolloutId, data: rollout },
  { op: "put", collection: LATEST_FLEET.collection, id: LATEST_FLEET.id, data: { rolloutId } },
  { op: "put", collection: WRITES, id: rolloutId, data: { rolloutId, written: count, who: { actor: "ann" }, details: {} } },
]);
console.log(`seeded ${count} collectors and targets in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`);

const collectors = new Collectors(store);
const index = new TargetIndex(store);
// Absent on the commits before the rollout's counts were kept: the dashboard built the rollout's status then.
const latestFleet = await import("../server/rollout/latest-fleet.ts").catch(() => null);
const deps = {
  collectors,
  attention: new Attention(index, collectors),
  staged: new StagedRollouts(store, collectors, new TargetHistory(store, collectors), index),
  telemetry: new Telemetry(),
  ...(latestFleet ? { fleetRollout: new latestFleet.LatestFleetRollout(store, collectors, index) } : {}),
} as Parameters<typeof dashboard>[0];
const loadStart = performance.now();
await Promise.all([collectors.get(ids[0]!), index.ready()]);
console.log(`views loaded in ${((performance.now() - loadStart) / 1000).toFixed(1)} s`);

// The longest the event loop waited for a timer while refreshes ran: how long one refresh holds it.
let longest = 0;
let last = performance.now();
const ticker = setInterval(() => {
  const t = performance.now();
  longest = Math.max(longest, t - last - 1);
  last = t;
}, 1);

const times: number[] = [];
const holds: number[] = [];
let first = 0;
let firstHold = 0;
let answer: Awaited<ReturnType<typeof dashboard>> | undefined;
for (let run = 0; run < runs; run++) {
  await Bun.sleep(5);
  longest = 0;
  last = performance.now();
  const start = performance.now();
  answer = await dashboard(deps);
  const took = performance.now() - start;
  // The ticker's next turn records the gap the refresh left.
  await Bun.sleep(2);
  if (run === 0) {
    first = took;
    firstHold = longest;
  } else {
    times.push(took);
    holds.push(longest);
  }
}
clearInterval(ticker);
times.sort((a, b) => a - b);
const a = answer!;
console.log(
  `answer: total ${a.collectors.total}, offline ${a.offline.count}, reporting only ${a.reportingOnly.count}, failed ${a.failed.count}, drifted ${a.drifted.count}, pinned ${a.pinned.count}, unrenderable ${a.unrenderable.count}; rollout ${a.rollout.state} total ${a.rollout.total} counts ${JSON.stringify(a.rollout.counts)}, ${a.rollout.failures.length} failures listed`,
);
console.log(
  `first refresh ${first.toFixed(2)} ms (event loop held ${firstHold.toFixed(1)} ms); then over ${runs - 1} runs: p50 ${percentile(times, 50).toFixed(2)} ms, max ${times.at(-1)!.toFixed(2)} ms; longest event-loop hold ${Math.max(...holds).toFixed(1)} ms`,
);
index.close();
collectors.close();
store.close();
rmSync(file, { force: true });
rmSync(`${file}-wal`, { force: true });
rmSync(`${file}-shm`, { force: true });
