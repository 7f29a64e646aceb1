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
 *
 * wrk mode (the issue-25 measurement; needs Debian's wrk: `apt-get install -y wrk`, and taskset from util-linux):
 *   bun bench/remotecfg.ts --wrk [seconds=10] [connections=64] [rounds=1] [threads=1] [logLevel=warn]
 * wrk drives the same binary-codec not_modified GetConfig (body and headers from a Lua
 * script written to a temp file) against the hello-world, a "floor" server and the real
 * server, then the same poll in the JSON codec against the three. The floor is a bare
 * `Bun.serve` that does what any answer to the poll must: reads the body and answers a
 * small body with the headers the server's answer carries (Content-Type, the two common
 * security headers, X-Request-Id): it tells Bun's own cost from svc's. Core split: the
 * servers are single-threaded Bun processes pinned to CPU 0, wrk is pinned to CPU 1
 * (`taskset`), so the load tool never competes with the server it measures; wrk's own CPU
 * use is printed for every run (one thread at 100 % of its core would be the bottleneck).
 * Each round measures the three servers back to back; the summary gives medians over rounds.
 * Load-process mode (internal): bun bench/remotecfg.ts --load <url> <token> <bodyBase64> <requests> <concurrency>
 */
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GetConfigRequestSchema, GetConfigResponseSchema } from "../server/gen/collector/v1/collector_pb.ts";
import { closedLoop, cpuSeconds, type LoadResult } from "./lib.ts";
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

const wrkMode = process.argv[2] === "--wrk";
const args = process.argv.slice(wrkMode ? 3 : 2);
const [total = wrkMode ? 10 : 100_000, concurrency = 64, rounds = wrkMode ? 1 : 3, wrkThreads = 1] = args.slice(0, wrkMode ? 4 : 3).map(Number);
const logLevel = args[wrkMode ? 4 : 3] ?? "warn";
/** In wrk mode the servers run on CPU 0 and wrk on CPU 1 (2 cores here); elsewhere, unpinned. */
const SERVER_CPUS = wrkMode ? ["taskset", "-c", "0"] : [];
const dir = mkdtempSync(join(tmpdir(), "svc-bench-rcfg-"));
const adminToken = "svcsa_" + "R".repeat(40);
const port = () => 20000 + Math.floor(Math.random() * 20000);

async function waitUp(url: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (
      await fetch(url).then(
        () => true,
        () => false,
      )
    )
      return;
    await Bun.sleep(25);
  }
  throw new Error(`${url} did not come up`);
}

const helloPort = port();
const hello = Bun.spawn(
  [...SERVER_CPUS, process.execPath, "-e", `Bun.serve({ hostname: "127.0.0.1", port: ${helloPort}, fetch: () => new Response("hello") })`],
  { stdout: "ignore", stderr: "inherit" },
);
// What any answer to the poll costs in Bun: read the body, answer the poll's header set.
const floorPort = port();
const floor = Bun.spawn(
  [
    ...SERVER_CPUS,
    process.execPath,
    "-e",
    `const answer = new Uint8Array(40);
     Bun.serve({ hostname: "127.0.0.1", port: ${floorPort}, fetch: async (req) => {
       await req.bytes();
       return new Response(answer, { headers: { "Content-Type": req.headers.get("content-type"), "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer", "X-Request-Id": Bun.randomUUIDv7() } });
     } })`,
  ],
  { stdout: "ignore", stderr: "inherit" },
);
const svcPort = port();
// SVC_BENCH_CPU_PROF=<dir>: the server writes a V8 CPU profile there when it stops (where a poll's time goes).
const profileDir = process.env.SVC_BENCH_CPU_PROF;
// SVC_BENCH_CODECS=binary (or json): only that codec's runs, e.g. for a profile of one path.
const codecs = process.env.SVC_BENCH_CODECS?.toLowerCase().split(",");
delete process.env.SVC_BENCH_CPU_PROF; // the server refuses unknown SVC_ variables
delete process.env.SVC_BENCH_CODECS;
const profile = profileDir ? ["--cpu-prof", "--cpu-prof-interval=250", `--cpu-prof-dir=${profileDir}`] : [];
const svc = Bun.spawn([...SERVER_CPUS, process.execPath, ...profile, join(import.meta.dir, "../server/main.ts")], {
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
  const before = cpuSeconds(serverPid);
  const out = await new Response(proc.stdout).text();
  if ((await proc.exited) !== 0) throw new Error("the load process failed");
  const used = cpuSeconds(serverPid) - before;
  // The load process also makes Math.min(5000, total) warm-up calls.
  return { ...(JSON.parse(out) as LoadResult), cpuMicros: (used * 1e6) / (total + Math.min(5000, total)) };
}

interface WrkResult {
  perSecond: number;
  requests: number;
  seconds: number;
  p50: number;
  p99: number;
  max: number;
  /** Non-2xx answers plus socket errors: must be 0. */
  errors: number;
  cpuMicros: number;
  /** wrk's own CPU over the measured run, % of one core. */
  wrkCpu: number;
}

/** One wrk run (pinned to CPU 1) with a Lua script for the POST; the server's CPU per answered request from /proc. */
async function wrk(url: string, headers: Record<string, string>, body: Uint8Array | string, serverPid: number): Promise<WrkResult> {
  const bytes = typeof body === "string" ? Buffer.from(body) : Buffer.from(body);
  const luaString = (b: Buffer) => '"' + [...b].map((c) => "\\" + String(c).padStart(3, "0")).join("") + '"';
  const script = join(dir, `wrk-${Math.random().toString(36).slice(2)}.lua`);
  await Bun.write(
    script,
    [
      `wrk.method = "POST"`,
      `wrk.body = ${luaString(bytes)}`,
      ...Object.entries(headers).map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`),
      `done = function(summary, latency, requests)`,
      `  local e = summary.errors`,
      `  io.write(string.format('WRKJSON {"requests":%d,"micros":%d,"errors":%d,"p50":%d,"p99":%d,"max":%d}\\n',`,
      `    summary.requests, summary.duration, e.connect + e.read + e.write + e.status + e.timeout,`,
      `    latency:percentile(50), latency:percentile(99), latency.max))`,
      `end`,
    ].join("\n"),
  );
  const run = async (seconds: number) => {
    const proc = Bun.spawn(["taskset", "-c", "1", "wrk", "-t", String(wrkThreads), "-c", String(concurrency), "-d", `${seconds}s`, "-s", script, url], {
      stdout: "pipe",
      stderr: "inherit",
    });
    const out = await new Response(proc.stdout).text();
    if ((await proc.exited) !== 0) throw new Error(`wrk failed: ${out}`);
    const line = out.split("\n").find((l) => l.startsWith("WRKJSON "));
    if (!line) throw new Error(`no wrk summary in: ${out}`);
    const summary = JSON.parse(line.slice(8)) as { requests: number; micros: number; errors: number; p50: number; p99: number; max: number };
    const usage = proc.resourceUsage();
    return { ...summary, cpuMicros: usage ? Number(usage.cpuTime.total) : Number.NaN };
  };
  await run(2); // warm-up (JIT, connections)
  const before = cpuSeconds(serverPid);
  const r = await run(total);
  const used = cpuSeconds(serverPid) - before;
  return {
    requests: r.requests,
    seconds: r.micros / 1e6,
    perSecond: r.requests / (r.micros / 1e6),
    p50: r.p50 / 1000,
    p99: r.p99 / 1000,
    max: r.max / 1000,
    errors: r.errors,
    cpuMicros: (used * 1e6) / r.requests,
    wrkCpu: (100 * r.cpuMicros) / r.micros,
  };
}

try {
  const svcBase = `http://127.0.0.1:${svcPort}`;
  await Promise.all([waitUp(`http://127.0.0.1:${helloPort}/`), waitUp(`http://127.0.0.1:${floorPort}/`), waitUp(`${svcBase}/healthz`)]);

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

  if (wrkMode) {
    const loadavg = (await Bun.file("/proc/loadavg").text()).split(" ").slice(0, 3).join(" ");
    console.log(
      `wrk mode: ${total} s per run after 2 s warm-up, ${concurrency} connections, ${wrkThreads} wrk thread(s) on CPU 1, servers on CPU 0, ` +
        `${rounds} round(s), server log level ${logLevel}, load average before ${loadavg}`,
    );
    const headers = { "Content-Type": "application/proto", "Connect-Protocol-Version": "1", Authorization: `Bearer ${token}` };
    const jsonBody = JSON.stringify({ id: collector.id, hash });
    const jsonHeaders = { ...headers, "Content-Type": "application/json" };
    const jsonCheck = (await (await fetch(svcBase + PATH, { method: "POST", headers: jsonHeaders, body: jsonBody })).json()) as { notModified?: boolean };
    if (!jsonCheck.notModified) throw new Error(`the JSON poll was not not_modified: ${JSON.stringify(jsonCheck)}`);
    const wline = (label: string, r: WrkResult) =>
      `${label} ${r.perSecond.toFixed(0).padStart(6)} req/s (p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms, max ${r.max.toFixed(1)} ms, ` +
      `server CPU ${r.cpuMicros.toFixed(1)} µs/req, wrk CPU ${r.wrkCpu.toFixed(0)} %, errors ${r.errors})`;
    const ratios: Record<string, { perSecond: number[]; cpu: number[]; floorCpu: number[]; micros: number[]; wrkCpu: number[] }> = {};
    for (let round = 1; round <= rounds; round++) {
      for (const [codec, h, b] of [
        ["binary", headers, body],
        ["JSON", jsonHeaders, jsonBody],
      ] as const) {
        if (codecs !== undefined && !codecs.includes(codec.toLowerCase())) continue;
        const bare = await wrk(`http://127.0.0.1:${helloPort}${PATH}`, h, b, hello.pid);
        const least = await wrk(`http://127.0.0.1:${floorPort}${PATH}`, h, b, floor.pid);
        const polls = await wrk(svcBase + PATH, h, b, svc.pid);
        if (polls.errors > 0 || bare.errors > 0 || least.errors > 0) console.log(`  WARNING: errors (non-2xx or socket) in the ${codec} runs`);
        const r = (ratios[codec] ??= { perSecond: [], cpu: [], floorCpu: [], micros: [], wrkCpu: [] });
        r.perSecond.push(polls.perSecond / bare.perSecond);
        r.cpu.push(bare.cpuMicros / polls.cpuMicros);
        r.floorCpu.push(bare.cpuMicros / least.cpuMicros);
        r.micros.push(polls.cpuMicros);
        r.wrkCpu.push(Math.max(bare.wrkCpu, least.wrkCpu, polls.wrkCpu));
        console.log(
          `round ${round} ${codec}: req/s ratio ${(polls.perSecond / bare.perSecond).toFixed(3)}, CPU-per-request ratio (hello ÷ poll) ${(bare.cpuMicros / polls.cpuMicros).toFixed(3)}` +
            ` (hello ÷ floor ${(bare.cpuMicros / least.cpuMicros).toFixed(3)})`,
        );
        console.log(`  ${wline("hello-world           ", bare)}`);
        console.log(`  ${wline("floor (body + headers)", least)}`);
        console.log(`  ${wline(`GetConfig ${codec.padEnd(6)} nm   `, polls)}`);
      }
    }
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
    for (const [codec, r] of Object.entries(ratios)) {
      console.log(
        `${codec}: median over ${r.cpu.length} round(s): req/s ratio ${median(r.perSecond).toFixed(3)}, CPU ratio (hello ÷ poll) ${median(r.cpu).toFixed(3)}, ` +
          `hello ÷ floor ${median(r.floorCpu).toFixed(3)}, poll ${median(r.micros).toFixed(1)} µs/req; wrk at most ${Math.max(...r.wrkCpu).toFixed(0)} % of its core`,
      );
    }
    process.exitCode = 0;
  } else {
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
    console.log(
      `median req/s ratio ${(median(ratios) * 100).toFixed(1)} % (target ≥ 50 %); median CPU-per-request ratio (hello ÷ poll) ${(median(cpuRatios) * 100).toFixed(1)} %`,
    );
  }
} finally {
  hello.kill();
  floor.kill();
  svc.kill();
  await Promise.all([hello.exited, floor.exited, svc.exited]);
  rmSync(dir, { recursive: true, force: true });
}
