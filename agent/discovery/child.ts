/**
 * Runs discovery in a short-lived child, `svc-agent discover --config <path> --json`,
 * and reads its report. The /proc walk, fingerprint matching and `systemctl` touch
 * about 3.6 MiB of runtime that would otherwise stay resident in the agent between
 * runs ten minutes apart (BENCHMARKS.md, svc-agent); in a child it is returned to
 * the system after each run, and a run that hangs or crashes cannot take the
 * channel down with it.
 */
import { join } from "node:path";
import type { DiscoveryReport } from "../../shared/agent-protocol.ts";

/** A run that takes longer than this is killed; the next one starts on schedule. */
const CHILD_TIMEOUT_MS = 60_000;
/** A report larger than this is not one the server would take either. */
const MAX_REPORT_BYTES = 4 * 1024 * 1024;

/** The command that runs this same agent: the compiled binary itself, or bun with agent/main.ts from source. */
function selfCommand(): string[] {
  return import.meta.path.startsWith("/$bunfs/") ? [process.execPath] : [process.execPath, join(import.meta.dir, "../main.ts")];
}

export async function discoverInChild(configPath: string): Promise<DiscoveryReport> {
  const child = Bun.spawn([...selfCommand(), "discover", "--config", configPath, "--json"], {
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    timeout: CHILD_TIMEOUT_MS,
  });
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  if (code !== 0) {
    const why = child.signalCode !== null ? `was killed (${child.signalCode})` : `exited ${code}`;
    throw new Error(`the discovery run ${why}: ${err.trim().slice(0, 2000) || "no message"}`);
  }
  if (out.length > MAX_REPORT_BYTES) throw new Error(`the discovery report is over ${MAX_REPORT_BYTES} bytes`);
  return JSON.parse(out) as DiscoveryReport;
}
