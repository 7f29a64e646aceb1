/**
 * Records agent/bytecode.order, the profile `scripts/build-agent.sh` lays the
 * agent's bytecode out by (bun build --bytecode-order): a bytecode build of the
 * agent runs against a real server, enrolls, reports, answers a browse call and
 * idles, with BUN_BYTECODE_ORDER_OUT set; on exit it writes which functions ran.
 * Bytecode that runs then sits together at the front of the binary, so the idle
 * agent touches fewer pages of it (BENCHMARKS.md, svc-agent). A profile from an
 * older build still applies; re-record after larger changes to agent/.
 *
 *   bun scripts/record-agent-order.ts
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { bootstrapToken, REPO, removeTempDirs, startServer, tempDir } from "../test/process/spawn.ts";

const OUT = join(REPO, "agent/bytecode.order");
const dir = tempDir("svc-agent-order-");
const binary = join(dir, "svc-agent");
const build = Bun.spawnSync(["bash", join(REPO, "scripts/build-agent.sh"), "--no-order", "--outfile", binary], { stdout: "pipe", stderr: "pipe" });
if (build.exitCode !== 0) throw new Error(build.stderr.toString());

const admin = bootstrapToken();
const server = await startServer({ statePath: join(dir, "state.db"), env: { SVC_BOOTSTRAP_ADMINTOKEN: admin, SVC_LOGGING_LEVEL: "warn" } });
try {
  const call = async (path: string, init: RequestInit = {}) => {
    const res = await fetch(`${server.base}/api/v1${path}`, { ...init, headers: { Authorization: `Bearer ${admin}`, "Content-Type": "application/json" } });
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<Record<string, unknown>>;
  };
  const { token } = await call("/enrollment-tokens", { method: "POST", body: JSON.stringify({ kind: "agent" }) });
  const config = join(dir, "agent.yaml");
  writeFileSync(config, `server:\n  url: ${server.base}\n  token: ${token}\nagent:\n  id: order\nbrowse:\n  allowedRoots: [${dir}]\n`);
  writeFileSync(join(dir, "app.log"), "one\ntwo\nthree\n");
  const agent = Bun.spawn([binary, "--config", config], { env: { ...process.env, BUN_BYTECODE_ORDER_OUT: OUT }, stdout: "ignore", stderr: "inherit" });
  await Bun.sleep(8000);
  await call(`/agents/order/browse?path=${dir}`);
  await call(`/agents/order/sample?path=${dir}/app.log&mode=lines&from=tail`);
  await Bun.sleep(35_000); // past a heartbeat
  agent.kill("SIGTERM");
  await agent.exited;
  console.log(`wrote ${OUT}`);
} finally {
  await server.stop();
  removeTempDirs();
}
