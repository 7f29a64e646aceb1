import { afterAll, expect, test } from "bun:test";
import { chmodSync, copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { executableMappings } from "./pageout.ts";

const MAPS = [
  "55d0c0000000-55d0c0400000 r--p 00000000 08:01 1234   /usr/local/bin/svc-agent",
  "55d0c0400000-55d0c4000000 r-xp 00400000 08:01 1234   /usr/local/bin/svc-agent",
  "55d0c4000000-55d0c4100000 rw-p 04000000 08:01 1234   /usr/local/bin/svc-agent",
  "7f0000000000-7f0000021000 rw-p 00000000 00:00 0 ",
  "7f1000000000-7f1000200000 r-xp 00000000 08:01 99     /usr/lib/x86_64-linux-gnu/libc.so.6",
  "7f2000000000-7f2000001000 r--p 00000000 08:01 77     /opt/my agent/svc-agent",
].join("\n");

test("only the executable's own read-only mappings are chosen, paths with spaces included", () => {
  expect(executableMappings(MAPS, "/usr/local/bin/svc-agent")).toEqual([
    { start: 0x55d0c0000000n, length: 0x400000n },
    { start: 0x55d0c0400000n, length: 0x3c00000n },
  ]);
  expect(executableMappings(MAPS, "/opt/my agent/svc-agent")).toEqual([{ start: 0x7f2000000000n, length: 0x1000n }]);
  expect(executableMappings(MAPS, "/nowhere")).toEqual([]);
});

const dir = mkdtempSync(join(tmpdir(), "svc-pageout-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * The kernel only reclaims pages no other process maps, and every bun on this
 * machine shares the runtime's pages; so the check runs a private copy of the
 * runtime, as a host runs its one svc-agent.
 */
test.if(process.platform === "linux")("the runtime's file-backed pages leave RSS and the process runs on", async () => {
  const runtime = join(dir, "bun-copy");
  copyFileSync(process.execPath, runtime);
  chmodSync(runtime, 0o755);
  const script = [
    `import { readFileSync } from "node:fs";`,
    `import { pageOutRuntimeCode } from ${JSON.stringify(join(import.meta.dir, "pageout.ts"))};`,
    `const rssFile = () => Number(/RssFile:\\s+(\\d+)/.exec(readFileSync("/proc/self/status", "utf8"))[1]);`,
    `const before = rssFile();`,
    `const advised = await pageOutRuntimeCode();`,
    `console.log(JSON.stringify({ before, advised, after: rssFile(), works: JSON.parse("[1,2]").length }));`,
  ].join("\n");
  const proc = Bun.spawn([runtime, "-e", script], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  expect(err).toBe("");
  expect(code).toBe(0);
  const result = JSON.parse(out) as { before: number; advised: boolean; after: number; works: number };
  expect(result.advised).toBe(true);
  expect(result.after).toBeLessThan(result.before / 2);
  expect(result.works).toBe(2);
});
