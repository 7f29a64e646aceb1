/**
 * What scripts/build-for-tests.sh built before the tests (builds never run inside
 * a test's time limit). A missing artifact, or one older than a file it is built
 * from, fails the test at once, naming the script that builds it.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";

const REPO = join(import.meta.dir, "..");
/** What every artifact is built from: a change under any of these (tests aside) means a rebuild. */
const SOURCES = ["server", "shared", "agent", "packaging", "systemd", "installer", "scripts/package.sh", "scripts/build-agent.sh", "package.json"];

/** The versions scripts/build-for-tests.sh packages: the first whole, the second agent only (an upgrade). */
export const PACKAGED = { v1: "1.2.3", v2: "1.2.4" } as const;

function newestSource(path: string, after: number): string | null {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs > after && !path.endsWith(".test.ts") ? path : null;
  for (const entry of readdirSync(path)) {
    if (entry === "node_modules") continue;
    const newer = newestSource(join(path, entry), after);
    if (newer) return newer;
  }
  return null;
}

/** The absolute path of `path` (relative to the repository) as scripts/build-for-tests.sh left it. */
export function built(path: string): string {
  const absolute = join(REPO, path);
  const rebuild = "run `bash scripts/build-for-tests.sh` (scripts/test.sh runs it before the tests)";
  if (!existsSync(absolute)) throw new Error(`${path} is missing: ${rebuild}`);
  const at = statSync(absolute).mtimeMs;
  for (const source of SOURCES) {
    const newer = newestSource(join(REPO, source), at);
    if (newer) throw new Error(`${path} is older than ${relative(REPO, newer)}: ${rebuild}`);
  }
  return absolute;
}

/** The directory holding the packages of `version` for this machine's architecture. */
export function builtPackages(version: string): string {
  return built(join("dist/test/packages", version));
}
