/**
 * Tests about file permissions mean nothing as root, which CI always is (root
 * reads a mode-000 file). Such a test calls `rerunUnprivileged` first: as
 * root it runs that one test again in a child `bun test` as the `nobody`
 * user (setpriv, util-linux) and passes only if the child ran it and it
 * passed; as anyone else it answers false and the test runs its own body.
 * The child runs the file's setup again, so the calling test needs a timeout
 * of RERUN_TIMEOUT_MS.
 */
import { expect } from "bun:test";
import { resolve } from "node:path";

const REPO = resolve(import.meta.dir, "..");

/** A whole child `bun test` run (start-up and the file's setup), on a loaded machine. */
export const RERUN_TIMEOUT_MS = 60_000;

/** True when the test ran (and passed) as `nobody` in a child; false when the caller is unprivileged and should run it itself. */
export function rerunUnprivileged(file: string, name: string): boolean {
  if (process.getuid?.() !== 0) return false;
  const pattern = "^.*" + name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") + "$";
  const child = Bun.spawnSync(
    ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", process.execPath, "test", "--timeout", "60000", file, "-t", pattern],
    { cwd: REPO, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: "/tmp", TMPDIR: "/tmp" }, stdout: "pipe", stderr: "pipe" },
  );
  const output = child.stdout.toString() + child.stderr.toString();
  if (child.exitCode !== 0 || !/^\s*1 pass$/m.test(output) || !/^\s*0 fail$/m.test(output)) {
    throw new Error(`the test as nobody (setpriv) did not pass once (exit ${child.exitCode}):\n${output.slice(-2000)}`);
  }
  expect(output).toContain(name);
  return true;
}
