/**
 * Target (docs/architecture.md): server start to ready ≤ 300 ms on the embedded store.
 * Spawns the server (source through bun, and the compiled dist/svc-server when
 * it exists) repeatedly on one state file and times spawn → first 200 from
 * /readyz, polling every 2 ms. Usage: bun bench/startup.ts [runs=10]
 */
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { percentile } from "./lib.ts";

const runs = Number(process.argv[2] ?? 10);
const repo = join(import.meta.dir, "..");
const dir = mkdtempSync(join(tmpdir(), "svc-bench-start-"));
const env = {
  ...process.env,
  SVC_STORAGE_BOLTPATH: join(dir, "state.db"),
  SVC_BOOTSTRAP_ADMINTOKEN: "svcsa_" + "S".repeat(40),
  SVC_LOGGING_LEVEL: "warn",
};

async function timeStart(cmd: string[]): Promise<number> {
  const port = 20000 + Math.floor(Math.random() * 20000);
  const started = performance.now();
  const proc = Bun.spawn(cmd, { env: { ...env, SVC_LISTEN: `127.0.0.1:${port}` }, stdout: "ignore", stderr: "inherit" });
  try {
    for (;;) {
      const ok = await fetch(`http://127.0.0.1:${port}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) return performance.now() - started;
      if (performance.now() - started > 10_000) throw new Error(`${cmd.join(" ")} did not become ready`);
      await Bun.sleep(2);
    }
  } finally {
    proc.kill();
    await proc.exited;
  }
}

const targets: [string, string[]][] = [["bun server/main.ts", [process.execPath, join(repo, "server/main.ts")]]];
if (existsSync(join(repo, "dist/svc-server"))) targets.push(["dist/svc-server", [join(repo, "dist/svc-server")]]);
try {
  for (const [label, cmd] of targets) {
    await timeStart(cmd); // first start creates the store; not counted
    const times: number[] = [];
    for (let i = 0; i < runs; i++) times.push(await timeStart(cmd));
    times.sort((a, b) => a - b);
    console.log(`${label}: ${runs} starts, median ${percentile(times, 50).toFixed(0)} ms, max ${times[times.length - 1]!.toFixed(0)} ms`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
