/**
 * Target (docs/architecture.md): remote-config `not_modified` polls ≥ 50 % of a bare Bun.serve
 * hello-world's req/s, same load tool, same run.
 *
 * Spawns (a) a bare `Bun.serve` hello-world and (b) the real server
 * (`server/main.ts`, seeded over REST with a Runtime R collector, a published
 * config and the collector's token), and drives each in turn from a separate
 * load process running the same closed loop (bench/lib.ts `closedLoop`, Bun's
 * fetch): a binary-codec `POST /collector.v1.CollectorService/GetConfig`
 * carrying the current hash, so every answer is `not_modified`. The
 * hello-world gets the very same request (it ignores it).
 *
 * Usage: bun bench/remotecfg.ts [requests=100000] [concurrency=64] [rounds=3] [logLevel=warn]
 * Load-process mode (internal): bun bench/remotecfg.ts --load <url> <token> <bodyBase64> <requests> <concurrency>
 */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GetConfigRequestSchema, GetConfigResponseSchema } from "../server/gen/collector/v1/collector_pb.ts";
import { closedLoop, type LoadResult } from "./lib.ts";
import { deploymentKit } from "../test/deployment.ts";

const PATH = "/collector.v1.CollectorService/GetConfig";

if (process.argv[2] === "--load") {
  const [url, token, body64, total, concurrency] = process.argv.slice(3) as [string, string, string, string, string];
  const body = body64 === "-" ? undefined : Buffer.from(body64, "base64");
  const headers = { "Content-Type": "application/proto", "Connect-Protocol-Version": "1", Authorization: `Bearer ${token}` };
  const call = async () => {
    const res = await fetch(url, body === undefined ? {} : { method: "POST", headers, body });
    if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`);
    await res.arrayBuffer();
  };
  await closedLoop(Math.min(5000, Number(total)), Number(concurrency), call); // warm-up
  const result = await closedLoop(Number(total), Number(concurrency), call);
  process.stdout.write(JSON.stringify(result) + "\n");
  process.exit(0);
}

const [total = 100_000, concurrency = 64, rounds = 3] = process.argv.slice(2, 5).map(Number);
const logLevel = process.argv[5] ?? "warn";
const dir = mkdtempSync(join(tmpdir(), "svc-bench-rcfg-"));
const adminToken = "svcsa_" + "R".repeat(40);
const port = () => 20000 + Math.floor(Math.random() * 20000);

async function waitUp(url: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await fetch(url).then(() => true, () => false)) return;
    await Bun.sleep(25);
  }
  throw new Error(`${url} did not come up`);
}

const helloPort = port();
const hello = Bun.spawn(
  [process.execPath, "-e", `Bun.serve({ hostname: "127.0.0.1", port: ${helloPort}, fetch: () => new Response("hello") })`],
  { stdout: "ignore", stderr: "inherit" },
);
const svcPort = port();
const svc = Bun.spawn([process.execPath, join(import.meta.dir, "../server/main.ts")], {
  env: {
    ...process.env,
    SVC_LISTEN: `127.0.0.1:${svcPort}`,
    SVC_STORAGE_BOLTPATH: join(dir, "state.db"),
    SVC_BOOTSTRAP_ADMINTOKEN: adminToken,
    SVC_LOGGING_LEVEL: logLevel,
  },
  stdout: "ignore",
  stderr: "inherit",
});

/** CPU seconds (user + system) a process has used so far, from /proc (Linux). */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = await Bun.file(`/proc/${pid}/stat`).text();
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
}

interface Measured extends LoadResult {
  /** Server CPU time per answered request, µs. */
  cpuMicros: number;
}

/** One closed-loop run from a separate load process, with the server's CPU use over it. */
async function load(url: string, token: string, body: Uint8Array | null, serverPid: number): Promise<Measured> {
  const proc = Bun.spawn(
    [process.execPath, import.meta.path, "--load", url, token, body === null ? "-" : Buffer.from(body).toString("base64"), String(total), String(concurrency)],
    { stdout: "pipe", stderr: "inherit" },
  );
  const before = await cpuSeconds(serverPid);
  const out = await new Response(proc.stdout).text();
  if ((await proc.exited) !== 0) throw new Error("the load process failed");
  const used = (await cpuSeconds(serverPid)) - before;
  // The load process also makes Math.min(5000, total) warm-up calls.
  return { ...(JSON.parse(out) as LoadResult), cpuMicros: (used * 1e6) / (total + Math.min(5000, total)) };
}

try {
  const svcBase = `http://127.0.0.1:${svcPort}`;
  await Promise.all([waitUp(`http://127.0.0.1:${helloPort}/`), waitUp(`${svcBase}/healthz`)]);

  // Seed: a Runtime R collector with one route, committed and published, and its token.
  const rest = async <T>(path: string, method = "GET", json?: unknown): Promise<T> => {
    const res = await fetch(`${svcBase}/api/v1${path}`, {
      method,
      headers: { Authorization: `Bearer ${adminToken}`, "Content-Type": "application/json" },
      body: json === undefined ? undefined : JSON.stringify(json),
    });
    if (res.status >= 300) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  const routeThrough = await deploymentKit(rest);
  const collector = await rest<{ id: string }>("/collectors", "POST", { name: "alloy-bench", managementMode: "rcfg-remotecfg" });
  await routeThrough(collector.id);
  await rest("/commit", "POST", { message: "bench" });
  await rest("/publish", "POST");
  const { token } = await rest<{ token: string }>(`/collectors/${collector.id}/otlp-token`, "POST");

  // The first poll fetches the config; its hash makes every later poll not_modified.
  const first = await fetch(svcBase + PATH, {
    method: "POST",
    headers: { "Content-Type": "application/proto", Authorization: `Bearer ${token}` },
    body: toBinary(GetConfigRequestSchema, create(GetConfigRequestSchema, { id: collector.id })),
  });
  const { hash, content } = fromBinary(GetConfigResponseSchema, await first.bytes());
  const body = toBinary(GetConfigRequestSchema, create(GetConfigRequestSchema, { id: collector.id, hash }));
  const check = fromBinary(
    GetConfigResponseSchema,
    await (await fetch(svcBase + PATH, { method: "POST", headers: { "Content-Type": "application/proto", Authorization: `Bearer ${token}` }, body })).bytes(),
  );
  if (!check.notModified) throw new Error("the second poll was not not_modified");

  console.log(
    `remote config not_modified polls vs bare Bun.serve; ${total} requests per run, ${concurrency} in flight, ${rounds} rounds, ` +
      `server log level ${logLevel}, request ${body.byteLength} B, config ${content.length} B`,
  );
  const ratios: number[] = [];
  const cpuRatios: number[] = [];
  const line = (label: string, r: Measured) =>
    `${label} ${r.perSecond.toFixed(0).padStart(6)} req/s (p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, server CPU ${r.cpuMicros.toFixed(1)} µs/req)`;
  for (let round = 1; round <= rounds; round++) {
    const bare = await load(`http://127.0.0.1:${helloPort}${PATH}`, token, body, hello.pid);
    const polls = await load(svcBase + PATH, token, body, svc.pid);
    // The edge's own floor: the server's /healthz goes through the same dispatch, no channel.
    const floor = await load(`${svcBase}/healthz`, token, null, svc.pid);
    const ratio = polls.perSecond / bare.perSecond;
    ratios.push(ratio);
    cpuRatios.push(bare.cpuMicros / polls.cpuMicros);
    console.log(`round ${round}: ratio ${(ratio * 100).toFixed(1)} %`);
    console.log(`  ${line("hello-world           ", bare)}`);
    console.log(`  ${line("GetConfig not_modified", polls)}`);
    console.log(`  ${line("svc GET /healthz      ", floor)}  (${((floor.perSecond / bare.perSecond) * 100).toFixed(1)} % of hello-world)`);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  console.log(`median req/s ratio ${(median(ratios) * 100).toFixed(1)} % (target ≥ 50 %); median CPU-per-request ratio (hello ÷ poll) ${(median(cpuRatios) * 100).toFixed(1)} %`);
} finally {
  hello.kill();
  svc.kill();
  await Promise.all([hello.exited, svc.exited]);
  rmSync(dir, { recursive: true, force: true });
}
