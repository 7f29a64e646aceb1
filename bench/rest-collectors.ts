/**
 * Target (docs/architecture.md): REST `GET /collectors` at 10,000 collectors, p99 ≤ 50 ms.
 * Seeds 10,000 collector records, starts the real server as a child process
 * (so client and server do not share an event loop), and drives it from here.
 * Usage: bun bench/rest-collectors.ts [collectors=10000] [requests=2000] [concurrency=8]
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Collector } from "../shared/collectors.ts";
import { SqliteStore } from "../server/store/sqlite.ts";
import { closedLoop, fmt } from "./lib.ts";

const [count = 10_000, total = 2000, concurrency = 8] = process.argv.slice(2).map(Number);
const dir = mkdtempSync(join(tmpdir(), "svc-bench-"));
const statePath = join(dir, "state.db");
const token = "svcsa_" + "B".repeat(40);

const store = new SqliteStore(statePath);
const teams = ["payments", "search", "ingest", "edge"];
const now = new Date().toISOString();
const docs: Collector[] = Array.from({ length: count }, (_, i) => ({
  id: Bun.randomUUIDv7(),
  name: `collector-${i}`,
  environment: i % 3 === 0 ? "prod" : "staging",
  managementMode: i % 2 === 0 ? "opamp" : "rcfg-remotecfg",
  tags: { team: teams[i % teams.length]!, rack: `r${i % 40}` },
  status: "pending",
  lastSeen: null,
  health: null,
  createdAt: now,
  updatedAt: now,
}));
for (let i = 0; i < docs.length; i += 1000) {
  await store.write(docs.slice(i, i + 1000).map((data) => ({ op: "put" as const, collection: "collectors", id: data.id, data })));
}
await store.close();

const port = 20000 + Math.floor(Math.random() * 20000);
const server = Bun.spawn([process.execPath, join(import.meta.dir, "../server/main.ts")], {
  env: {
    ...process.env,
    SVC_LISTEN: `127.0.0.1:${port}`,
    SVC_STORAGE_BOLTPATH: statePath,
    SVC_BOOTSTRAP_ADMINTOKEN: token,
    SVC_LOGGING_LEVEL: "warn",
    // One token drives the whole load: lift its rate limit, which would otherwise answer 429 past 100/s.
    SVC_RATELIMIT_API_PERSECOND: "1000000",
    SVC_RATELIMIT_API_BURST: "1000000",
  },
  stdout: "ignore",
  stderr: "inherit",
});
const base = `http://127.0.0.1:${port}`;
for (let i = 0; i < 200; i++) {
  if (
    await fetch(`${base}/healthz`).then(
      (r) => r.ok,
      () => false,
    )
  )
    break;
  await Bun.sleep(25);
}

const headers = { Authorization: `Bearer ${token}` };
const get = (path: string) => async () => {
  const res = await fetch(base + path, { headers });
  if (res.status !== 200) throw new Error(`${path}: ${res.status}`);
  await res.arrayBuffer();
};
try {
  console.log(`collectors: ${count}, requests per case: ${total}, concurrency: ${concurrency}`);
  await closedLoop(200, concurrency, get("/api/v1/collectors")); // warm-up
  for (const [label, path] of [
    ["first page (limit 100)", "/api/v1/collectors"],
    ["deep page via cursor", `/api/v1/collectors?cursor=${Buffer.from(docs[count - 150]!.id).toString("base64url")}`],
    ["filter tag=team:payments", "/api/v1/collectors?tag=team:payments"],
    ["filter q= (scans all, few hits)", "/api/v1/collectors?q=collector-9999"],
  ] as const) {
    console.log(`${label}: ${fmt(await closedLoop(total, concurrency, get(path)))}`);
  }
} finally {
  server.kill();
  await server.exited;
  rmSync(dir, { recursive: true, force: true });
}
