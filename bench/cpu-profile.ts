/**
 * Sums up a V8 `.cpuprofile` (what `bun --cpu-prof` writes, as `bench/fleet.ts --cpu-prof DIR` asks
 * of the server): the functions with the most self and inclusive time, over the whole profile or a
 * window of it, so a note can say where a stretch of the server's time went.
 *
 * Usage: bun bench/cpu-profile.ts FILE [--from SECONDS] [--to SECONDS] [--top 25] [--buckets SECONDS]
 *   --from/--to: the window, in seconds from the profile's start.
 *   --buckets: also print, per bucket of that many seconds, how busy the thread was and its top function.
 */
import { readFileSync } from "node:fs";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

const argv = process.argv.slice(2);
const file = argv[0];
if (!file) {
  console.error("usage: bun bench/cpu-profile.ts FILE [--from S] [--to S] [--top N] [--buckets S]");
  process.exit(2);
}
const option = (name: string) => (argv.includes(name) ? Number(argv[argv.indexOf(name) + 1]) : undefined);
const from = (option("--from") ?? 0) * 1e6;
const to = (option("--to") ?? Number.POSITIVE_INFINITY) * 1e6;
const top = option("--top") ?? 25;
const bucketUs = (option("--buckets") ?? 0) * 1e6;

const profile = JSON.parse(readFileSync(file, "utf8")) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const IDLE = new Set(["(idle)", "(program)", "(garbage collector)"]);
const label = (f: CallFrame) => `${f.functionName || "(anonymous)"} ${f.url.replace(/^.*\/(server|shared|node_modules)\//, "$1/")}:${f.lineNumber + 1}`;

/** The sampling interval: the most common gap between samples. */
const interval = (() => {
  const counts = new Map<number, number>();
  for (const d of profile.timeDeltas) counts.set(Math.round(d / 10) * 10, (counts.get(Math.round(d / 10) * 10) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 1000;
})();
const self = new Map<string, number>();
const inclusive = new Map<string, number>();
const buckets = new Map<number, { busy: number; self: Map<string, number> }>();
let at = 0;
let busy = 0;
/** The window's first and last sample times: its wall-clock length, against which `busy` is the thread's work. */
let first = Number.POSITIVE_INFINITY;
let last = 0;
for (let i = 0; i < profile.samples.length; i++) {
  at += profile.timeDeltas[i]!;
  // Bun's profiler takes samples only while the thread runs JavaScript (no idle samples): a gap after a sample is not its
  // work, so each sample counts as one sampling interval.
  const delta = Math.min(profile.timeDeltas[i + 1] ?? 0, interval);
  if (at < from || at > to) continue;
  const node = byId.get(profile.samples[i]!)!;
  const name = node.callFrame.functionName;
  first = Math.min(first, at);
  last = at;
  const bucket = bucketUs > 0 ? Math.floor(at / bucketUs) : 0;
  let b = buckets.get(bucket);
  if (!b) buckets.set(bucket, (b = { busy: 0, self: new Map() }));
  if (name === "(idle)") continue;
  // Garbage collection is work too; only idle time is not.
  busy += delta;
  b.busy += delta;
  const own = IDLE.has(name) ? name : label(node.callFrame);
  self.set(own, (self.get(own) ?? 0) + delta);
  b.self.set(own, (b.self.get(own) ?? 0) + delta);
  const seen = new Set<string>();
  for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === "(root)") break;
    const key = label(frame);
    if (seen.has(key)) continue;
    seen.add(key);
    inclusive.set(key, (inclusive.get(key) ?? 0) + delta);
  }
}

const ms = (us: number) => `${(us / 1000).toFixed(0)} ms`;
/** Shares of the thread's work in the window. */
const pct = (us: number) => `${((us / Math.max(busy, 1)) * 100).toFixed(1)} %`;
const wall = Math.max(last - first, 1);
console.log(`window ${ms(wall)}; busy ${ms(busy)} (${((busy / wall) * 100).toFixed(0)} % of the window)`);
for (const [title, table] of [
  ["self", self],
  ["inclusive", inclusive],
] as const) {
  console.log(`\n${title}:`);
  for (const [key, us] of [...table].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(us).padStart(7)} ${ms(us).padStart(9)}  ${key}`);
}
if (bucketUs > 0) {
  console.log("\nbuckets (start s, busy, top self):");
  for (const [bucket, b] of [...buckets].sort((x, y) => x[0] - y[0])) {
    const [name, us] = [...b.self].sort((x, y) => y[1] - x[1])[0] ?? ["-", 0];
    console.log(`  ${String((bucket * bucketUs) / 1e6).padStart(6)}  ${((b.busy / bucketUs) * 100).toFixed(0).padStart(3)} %  ${ms(us)} ${name}`);
  }
}
