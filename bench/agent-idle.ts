/**
 * svc-agent idle cost (docs/architecture.md "Performance targets": idle RSS ≤ 40 MiB, ≤ 1 % CPU idle).
 * Compiles the agent as `bun run build:agent` does, starts the real server, runs the agent connected to it
 * with discovery done, then samples /proc for `seconds` (default 120): RSS
 * split into private (anonymous) and file-backed pages (the Bun runtime's own
 * code, mapped from the binary and shared with the page cache), and CPU from
 * utime+stime. Also reports a compiled `setInterval` hello for the runtime's floor.
 *
 *   bun bench/agent-idle.ts [seconds] [--tls]
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BUN, bootstrapToken, processMemory, REPO, removeTempDirs, startServer, tempDir } from "../test/process/spawn.ts";

const seconds = Number(process.argv.find((arg) => /^\d+$/.test(arg)) ?? 120);
/** --tls: the server serves TLS (the test CA in test/agents/tls) and the agent connects over wss, as in production. */
const tls = process.argv.includes("--tls");
const TLS_DIR = join(REPO, "test/agents/tls");
const dir = tempDir("svc-agent-bench-");
const TICKS = 100; // USER_HZ on Linux

/** Runs a build command; throws with its stderr when it fails. */
function build(command: string[]): void {
  const result = Bun.spawnSync(command, { stdout: "pipe", stderr: "pipe" });
  if (result.exitCode !== 0) throw new Error(result.stderr.toString());
}

/** Memory in MiB and CPU seconds (utime + stime) so far. */
function sample(pid: number) {
  const { rss, anon, file } = processMemory(pid);
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return { rss: rss / 1024, anon: anon / 1024, file: file / 1024, cpuSeconds: (Number(stat[11]) + Number(stat[12])) / TICKS };
}

async function idle(command: string[], label: string): Promise<void> {
  const proc = Bun.spawn(command, { stdout: "ignore", stderr: "ignore" });
  await Bun.sleep(10_000); // start, connect, first discovery
  const first = sample(proc.pid);
  let peak = first.rss;
  const started = performance.now();
  for (let elapsed = 0; elapsed < seconds; elapsed += 5) {
    await Bun.sleep(5000);
    peak = Math.max(peak, sample(proc.pid).rss);
  }
  const last = sample(proc.pid);
  const cpu = ((last.cpuSeconds - first.cpuSeconds) / ((performance.now() - started) / 1000)) * 100;
  console.log(
    `${label}: RSS ${last.rss.toFixed(1)} MiB (private ${last.anon.toFixed(1)} + file-backed ${last.file.toFixed(1)}), peak ${peak.toFixed(1)} MiB; CPU ${cpu.toFixed(3)} % over ${seconds} s`,
  );
  proc.kill();
  await proc.exited;
}

const hello = join(dir, "hello.ts");
writeFileSync(hello, "setInterval(() => {}, 1000);\n");
build([BUN, "build", "--compile", "--minify", hello, "--outfile", join(dir, "hello")]);
build(["bash", join(REPO, "scripts/build-agent.sh"), "--outfile", join(dir, "svc-agent")]);

const admin = bootstrapToken();
const tlsEnv = tls ? { SVC_TLS_CERTFILE: join(TLS_DIR, "cert.pem"), SVC_TLS_KEYFILE: join(TLS_DIR, "key.pem") } : {};
const server = await startServer({
  statePath: join(dir, "state.db"),
  waitReady: !tls,
  env: { SVC_BOOTSTRAP_ADMINTOKEN: admin, SVC_LOGGING_LEVEL: "warn", ...tlsEnv },
});
const base = tls ? `https://localhost:${server.port}` : server.base;
const ca = readFileSync(join(TLS_DIR, "cert.pem"), "utf8");
try {
  const mint = () =>
    fetch(`${base}/api/v1/enrollment-tokens`, {
      method: "POST",
      headers: { Authorization: `Bearer ${admin}`, "Content-Type": "application/json" },
      body: JSON.stringify({ kind: "agent" }),
      tls: { ca },
    } as RequestInit);
  let res: Response | null = null;
  for (let tries = 0; res === null && tries < 100; tries++) res = await mint().catch(() => Bun.sleep(100).then(() => null));
  const { token } = (await res!.json()) as { token: string };
  const config = join(dir, "agent.yaml");
  const certificates = tls ? `certificates:\n  caCertPath: ${join(TLS_DIR, "cert.pem")}\n` : "";
  writeFileSync(config, `server:\n  url: ${base}\n  token: ${token}\nagent:\n  id: bench\n${certificates}`);
  if (!tls) await idle([join(dir, "hello")], "compiled bun hello (runtime floor)");
  await idle([join(dir, "svc-agent"), "--config", config], `svc-agent, connected over ${tls ? "wss" : "ws"}, idle`);
} finally {
  await server.stop();
  removeTempDirs();
}
