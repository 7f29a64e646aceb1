/**
 * Target (docs/architecture.md): svc-agent samples a 256 KiB tail of a 10 GiB file in ≤ 20 ms.
 * Creates a sparse 10 GiB file whose last MiB is log lines (so the tail is text),
 * then times whole `Browser.sample` calls (checks, realpath, the per-component open
 * walk, read, decode) with the agent's default limits. The tail is in the page cache
 * after the first call, as it is for a log being written. The JIT policy is the
 * compiled agent's (scripts/build-agent.sh), so the times are the binary's. Usage:
 * bun bench/agent-browse.ts [runs=200] [dir=os.tmpdir(), on a local disk]
 */
import { closeSync, ftruncateSync, mkdtempSync, openSync, realpathSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Browser } from "../agent/browse.ts";
import type { BrowseSample } from "../shared/agent-protocol.ts";
import { percentile } from "./lib.ts";

Bun.unsafe.setJITPolicy(1000);
const runs = Number(process.argv[2] ?? 200);
const dir = realpathSync(mkdtempSync(join(process.argv[3] ?? tmpdir(), "svc-bench-browse-")));
const SIZE = 10 * 1024 ** 3;
const TARGET_MS = 20;

/** A sparse file of `size` bytes ending in 1 MiB of log lines. */
function createFile(path: string, size: number): void {
  const line = (i: number) => `2025-01-01T00:00:00.000Z INFO request ${i} served path=/api/v1/collectors status=200 duration_ms=12\n`;
  const text = Buffer.from(Array.from({ length: 10_000 }, (_, i) => line(i)).join(""));
  const fd = openSync(path, "w");
  try {
    ftruncateSync(fd, size);
    writeSync(fd, text, 0, text.length, size - text.length);
  } finally {
    closeSync(fd);
  }
}

async function measure(label: string, call: () => Promise<BrowseSample>, check: (s: BrowseSample) => boolean): Promise<number> {
  const first = await call();
  if (!check(first)) throw new Error(`${label}: unexpected sample ${JSON.stringify({ ...first, content: first.content.length })}`);
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await call();
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  const [p50, p99] = [percentile(times, 50), percentile(times, 99)];
  console.log(`| ${label} | ${p50.toFixed(3)} ms | ${p99.toFixed(3)} ms | ${times[times.length - 1]!.toFixed(3)} ms |`);
  return p99;
}

try {
  const path = join(dir, "huge.log");
  createFile(path, SIZE);
  const browser = new Browser({
    enabled: true,
    allowedRoots: [dir],
    denyPatterns: ["*.key", "*.pem", "id_rsa*", "*shadow*", ".ssh", "/proc/*", "/sys/*", "/etc/shadow"],
    maxDirEntries: 1000,
    maxSampleLines: 200,
    maxSampleBytes: 262144,
  });
  console.log(`10 GiB sparse file, ${runs} runs per case after one untimed call`);
  console.log("| case | median | p99 | max |\n|---|---|---|---|");
  const p99s = [
    await measure(
      "bytes, tail (256 KiB)",
      () => browser.sample(path, "bytes", "tail"),
      (s) => !s.binary && s.content.length === 262144,
    ),
    await measure(
      "lines, tail (200 lines)",
      () => browser.sample(path, "lines", "tail"),
      (s) => !s.binary && s.lines === 200,
    ),
  ];
  await measure(
    "for context: bytes, head (256 KiB of holes, flagged binary)",
    () => browser.sample(path, "bytes", "head"),
    (s) => s.binary,
  );
  console.log(`target p99 ≤ ${TARGET_MS} ms for a 256 KiB tail: ${Math.max(...p99s) <= TARGET_MS ? "met" : "NOT met"}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
