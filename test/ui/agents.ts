/**
 * Real host agents for browser tests, run from source against the test
 * server: each gets its own config file under `dir` and is stopped by
 * `stopAgents`.
 */
import type { Subprocess } from "bun";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { TestServer } from "../harness.ts";

const REPO = resolve(import.meta.dir, "../..");

/** The child's environment without any proxy: the agent talks to 127.0.0.1 directly. */
function childEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !/_proxy$/i.test(key)) env[key] = value;
  }
  return env;
}

/** Starts an agent with id `id` and the given `browse:` block (YAML lines, indented two spaces). */
export function startAgent(server: TestServer, dir: string, id: string, token: string, browse: string): Subprocess {
  const config = join(dir, `${id}.yaml`);
  writeFileSync(config, `server:\n  url: ${server.base}\n  token: ${token}\nagent:\n  id: ${id}\n  environment: uitest\nbrowse:\n${browse}\n`, { mode: 0o600 });
  return Bun.spawn([process.execPath, "agent/main.ts", "--config", config], { cwd: REPO, env: childEnv(), stdout: "ignore", stderr: "pipe" });
}

export async function untilConnected(server: TestServer, id: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const res = await server.api(`/agents/${id}`);
    if (res.status === 200 && ((await res.json()) as { connected: boolean }).connected) return;
    await Bun.sleep(200);
  }
  throw new Error(`agent ${id} did not connect within ${timeoutMs} ms`);
}

export async function stopAgents(agents: Subprocess[]): Promise<void> {
  for (const agent of agents) agent.kill();
  await Promise.all(agents.map((agent) => agent.exited));
}
