/**
 * Target (issue 33 item 5): no matcher set a caller may send holds the event
 * loop — `/healthz` p99 < 100 ms while a viewer sends the worst matchers it
 * can, over a fleet.
 *
 * Seeds N collectors whose `blob` tag is 1,024 random characters of `aAx` (the
 * longest tag value, and the alphabet the attack patterns are written for),
 * starts the real server as a child process, mints a viewer token
 * (collectors:read), then for each case runs `attackers` closed loops of that
 * case's request for `seconds` while another loop polls `/healthz` every 20 ms
 * (latency = request sent → answer read; a held loop shows as a slow answer).
 * Cases: no attack; the issue's 32 matchers of 1,024 characters
 * (`(?:[a-zA]{1000}|…)*x`, refused); and the largest list the caps allow,
 * two matchers of ~500 RE2 instructions that cost the most per character we
 * found (`.*a.{160}x|…`, NFA threads on every position) plus 30 cheap ones,
 * on `/matchers/preview` (every collector examined) and on
 * `GET /collectors?match=` (few match, so the page walks the whole fleet).
 *
 * Usage: bun bench/matchers.ts [collectors=50000] [seconds=20] [attackers=8]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Collector } from "../shared/collectors.ts";
import { MAX_MATCHER_PROGRAM, MAX_MATCHERS_PROGRAM, parseMatcherList } from "../shared/matchers.ts";
import { SqliteStore } from "../server/store/sqlite.ts";
import { freePort } from "../test/process/spawn.ts";
import { percentile } from "./lib.ts";

const [count = 50_000, seconds = 20, attackers = 8] = process.argv.slice(2).map(Number);
const dir = mkdtempSync(join(tmpdir(), "svc-bench-matchers-"));
const statePath = join(dir, "state.db");
const adminToken = "svcsa_" + "B".repeat(40);

function adversarial(length: number, seed: number): string {
  let s = seed;
  let out = "";
  for (let i = 0; i < length; i++) {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    out += "aAx"[(s >> 16) % 3];
  }
  return out;
}

const store = new SqliteStore(statePath);
const now = new Date().toISOString();
const teams = ["payments", "search", "ingest", "edge"];
for (let i = 0; i < count; i += 1000) {
  const docs: Collector[] = Array.from({ length: Math.min(1000, count - i) }, (_, j) => ({
    id: Bun.randomUUIDv7(),
    name: `collector-${i + j}`,
    environment: (i + j) % 3 === 0 ? "prod" : "staging",
    managementMode: "opamp",
    tags: { team: teams[(i + j) % teams.length]!, blob: adversarial(1024, i + j + 1) },
    status: "pending",
    lastSeen: null,
    health: null,
    createdAt: now,
    updatedAt: now,
  }));
  await store.write(docs.map((data) => ({ op: "put" as const, collection: "collectors", id: data.id, data })));
}
await store.close();

const port = freePort();
const server = Bun.spawn([process.execPath, join(import.meta.dir, "../server/main.ts")], {
  env: {
    ...process.env,
    SVC_LISTEN: `127.0.0.1:${port}`,
    SVC_STORAGE_BOLTPATH: statePath,
    SVC_BOOTSTRAP_ADMINTOKEN: adminToken,
    SVC_LOGGING_LEVEL: "warn",
    // The attackers share one viewer token: its own rate (100/s) would answer 429 before the work this measures.
    SVC_RATELIMIT_API_PERSECOND: "1000000",
    SVC_RATELIMIT_API_BURST: "1000000",
  },
  stdout: "ignore",
  stderr: "inherit",
});
const base = `http://127.0.0.1:${port}`;
for (let i = 0; i < 400; i++) {
  if (
    await fetch(`${base}/healthz`).then(
      (r) => r.ok,
      () => false,
    )
  )
    break;
  await Bun.sleep(25);
}

const minted = await fetch(`${base}/api/v1/service-accounts`, {
  method: "POST",
  headers: { Authorization: `Bearer ${adminToken}`, "Content-Type": "application/json" },
  body: JSON.stringify({ name: "viewer", scopes: ["collectors:read"] }),
});
const viewer = ((await minted.json()) as { token: string }).token;
const headers = { Authorization: `Bearer ${viewer}`, "Content-Type": "application/json" };
// The collector view loads on first use: once before measuring.
await fetch(`${base}/api/v1/collectors?limit=1`, { headers });

const issueMatcher = (() => {
  const alternatives: string[] = [];
  for (let i = 0; `x=~"(?:${[...alternatives, "[a-zAB]{1000}"].join("|")})*x"`.length <= 1024; i++)
    alternatives.push(`[a-zA${String.fromCharCode(66 + (i % 24))}]{1000}`);
  return `x=~"(?:${alternatives.join("|")})*x"`;
})();
const heavy = (op: "=~" | "!~", gap: number) => `blob${op}"(?:.*a.{${gap}}x|.*A.{${gap}}A|.*x.{${gap}}a)"`;
const largest = (op: "=~" | "!~") => [heavy(op, 160), heavy(op, 159), ...Array.from({ length: 30 }, (_, i) => `team!="none-${i}"`)];
const programs = parseMatcherList(largest("!~")).map((m) => m.program);
const total = programs.reduce((a, b) => a + b, 0);

interface Case {
  name: string;
  request: () => Promise<Response>;
}
const preview = (matchers: string[]) => () =>
  fetch(`${base}/api/v1/matchers/preview`, { method: "POST", headers, body: JSON.stringify({ matchers, limit: 1 }) });
const cases: Case[] = [
  { name: "no attack", request: async () => new Response(null, { status: 204 }) },
  { name: "issue: 32 × 1,024-char `(?:[a-zA]{1000}|…)*x`, /matchers/preview", request: preview(Array.from({ length: 32 }, () => issueMatcher)) },
  { name: `largest allowed (${total} instructions: 2 × ~${MAX_MATCHER_PROGRAM} + 30 cheap), /matchers/preview`, request: preview(largest("!~")) },
  {
    name: `largest allowed, \`GET /collectors?match=\` (few match: the whole fleet walked)`,
    request: () =>
      fetch(
        `${base}/api/v1/collectors?limit=100&${largest("=~")
          .map((m) => `match=${encodeURIComponent(m)}`)
          .join("&")}`,
        { headers },
      ),
  },
];

console.log(`${count} collectors, ${attackers} attackers, ${seconds} s a case; caps ${MAX_MATCHER_PROGRAM} a matcher, ${MAX_MATCHERS_PROGRAM} a list`);
console.log(`load average at start: ${(await Bun.file("/proc/loadavg").text()).trim()}`);
console.log("| Case | attack requests | statuses | attack request p50 / max | `/healthz` polls | p50 | p99 | max |");
console.log("|---|---|---|---|---|---|---|---|");
for (const c of cases) {
  let done = false;
  const health: number[] = [];
  const attack: number[] = [];
  const statuses = new Map<number, number>();
  const poller = (async () => {
    while (!done) {
      const t0 = performance.now();
      const res = await fetch(`${base}/healthz`);
      await res.arrayBuffer();
      health.push(performance.now() - t0);
      await Bun.sleep(20);
    }
  })();
  const loops = Array.from({ length: c.name === "no attack" ? 0 : attackers }, async () => {
    while (!done) {
      const t0 = performance.now();
      // A connection the server drops counts as status 0 (the case goes on).
      const status = await c.request().then(
        async (res) => (await res.arrayBuffer(), res.status),
        () => 0,
      );
      attack.push(performance.now() - t0);
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
  });
  await Bun.sleep(seconds * 1000);
  done = true;
  await Promise.all([poller, ...loops]);
  health.sort((a, b) => a - b);
  attack.sort((a, b) => a - b);
  const status = [...statuses].map(([s, n]) => `${s} × ${n}`).join(", ") || "–";
  const attackTimes = attack.length ? `${percentile(attack, 50).toFixed(0)} / ${attack[attack.length - 1]!.toFixed(0)} ms` : "–";
  console.log(
    `| ${c.name} | ${attack.length} | ${status} | ${attackTimes} | ${health.length} | ${percentile(health, 50).toFixed(1)} ms | ${percentile(health, 99).toFixed(1)} ms | ${health[health.length - 1]!.toFixed(1)} ms |`,
  );
}
console.log(`load average at end: ${(await Bun.file("/proc/loadavg").text()).trim()}`);
server.kill();
await server.exited;
rmSync(dir, { recursive: true, force: true });
