/**
 * Gives back the runtime code that only start-up and discovery touched.
 *
 * Nearly all of an idle agent's resident memory is the Bun runtime's code,
 * mapped from the binary: clean, file-backed pages that were faulted in once
 * (config parsing, TLS set-up, spawning discovery) and then sit in RSS
 * although the idle loop never runs them again. madvise(MADV_PAGEOUT) on the
 * binary's own mappings asks the kernel to reclaim them now rather than under
 * memory pressure; the pages the heartbeat and the socket keep using fault
 * straight back from the page cache. Nothing private is touched, so this can
 * cost a few page faults and never correctness. Linux 5.4+; elsewhere (or if
 * libc cannot be opened) it does nothing.
 */
import { readFileSync } from "node:fs";

const MADV_PAGEOUT = 21;

type Madvise = (address: bigint, length: bigint, advice: number) => number;
let madvise: Madvise | null | undefined;

async function loadMadvise(): Promise<Madvise | null> {
  try {
    const { dlopen, FFIType } = await import("bun:ffi");
    const libc = dlopen("libc.so.6", { madvise: { args: [FFIType.u64, FFIType.u64, FFIType.i32], returns: FFIType.i32 } });
    return (address, length, advice) => libc.symbols.madvise(address, length, advice) as number;
  } catch {
    return null;
  }
}

/** The read-only (code and constant) ranges the running executable is mapped at, from /proc/self/maps. */
export function executableMappings(maps: string, executable: string): { start: bigint; length: bigint }[] {
  const ranges: { start: bigint; length: bigint }[] = [];
  for (const line of maps.split("\n")) {
    const fields = line.split(/\s+/);
    // Writable mappings hold private data: without swap they cannot be reclaimed, with swap they should not be.
    if (fields.length < 6 || fields[1]!.includes("w") || fields.slice(5).join(" ") !== executable) continue;
    const [start, end] = fields[0]!.split("-").map((hex) => BigInt(`0x${hex}`));
    ranges.push({ start: start!, length: end! - start! });
  }
  return ranges;
}

/** Returns the executable's clean pages to the kernel; true when the kernel took the advice. */
export async function pageOutRuntimeCode(): Promise<boolean> {
  if (process.platform !== "linux") return false;
  madvise ??= await loadMadvise();
  if (madvise === null) return false;
  let maps: string;
  try {
    maps = readFileSync("/proc/self/maps", "utf8");
  } catch {
    return false;
  }
  let advised = false;
  for (const { start, length } of executableMappings(maps, process.execPath)) {
    if (madvise(start, length, MADV_PAGEOUT) === 0) advised = true;
  }
  return advised;
}
