/**
 * Bounded, read-only log browsing for svc-agent (spec "Agent log browsing").
 * The agent runs as root, so every request passes these checks, in order, before
 * anything under the requested path is read:
 *  1. `enabled` false → `browse_disabled`, before touching the filesystem;
 *  2. the request must be an absolute path without NUL bytes, ≤ 4096 characters → `bad_request`;
 *  3. the requested path (normalised, `..` collapsed) must lie inside an allowed root
 *     (component boundaries: `/var/logs` is not inside `/var/log`) → `outside_allowed_roots`,
 *     and match no deny pattern → `denied_by_pattern`; then the same two checks again on
 *     its real path (symlinks resolved), so a link cannot lead out of the roots or into a
 *     denied place.
 * Deny patterns are matched as shared/deny.ts says. A sample also refuses a file with
 * more than one hard link (`hard_link`): its other names may lie outside the roots or
 * be denied (a link to `/etc/shadow`, or to `server.key`), and no path check sees them.
 * Listings leave denied entries out rather than flag them, so their names never leave
 * the host; they read at most `maxDirEntries` + 1 entries (the extra one only to set
 * `truncated`) and sort what they read by name; entries are lstat'ed, so a symlink is
 * reported as such, not followed. Listing and sampling report the requested path.
 * Samples never read more than `maxSampleBytes` (plus one byte of look-behind in tail
 * line mode), refuse directories and special files without opening them, and mark
 * binary content instead of returning it.
 * Opening walks the checked real path one component at a time through /proc/self/fd
 * with O_NOFOLLOW, so a directory swapped for a symlink after the checks fails the
 * open instead of escaping. Linux only, like the agent.
 */
import { constants, type Stats } from "node:fs";
import { lstat, open, opendir, realpath, type FileHandle } from "node:fs/promises";
import { basename, dirname, normalize } from "node:path";
import { DenyList } from "../shared/deny.ts";
import type { BrowseConfig } from "./types.ts";
import type { AgentErrorCode, BrowseEntry, BrowseListing, BrowseSample } from "../shared/agent-protocol.ts";

export const MAX_PATH_LENGTH = 4096;
export const DISABLED_MESSAGE = "log browsing is disabled by agent configuration";

/** Tail line sampling grows backwards by this much, so a usual 200-line tail reads one chunk. */
const CHUNK_BYTES = 64 * 1024;
/** Above this share of invalid UTF-8 sequences (U+FFFD after decoding) a sample counts as binary. */
const BINARY_INVALID_SHARE = 0.1;
const NL = 0x0a;
const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
/** O_NONBLOCK: should a fifo appear between the lstat and the open, the open still returns. */
const FILE_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

export class BrowseError extends Error {
  constructor(
    readonly code: AgentErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "BrowseError";
  }
}

export type SampleMode = BrowseSample["mode"];
export type SampleFrom = BrowseSample["from"];

/** A path that passed every check: as requested (normalised) and as resolved. */
interface CheckedPath {
  requested: string;
  real: string;
}

/** The bytes a sample returns, where in the file they start, and every byte read to find them. */
interface Slice {
  bytes: Buffer;
  offset: number;
  lines: number;
  read: Buffer;
}

export class Browser {
  readonly #config: BrowseConfig;
  readonly #deny: DenyList;
  readonly #wholeFilesystem: boolean;
  /** Configured roots and, once resolved, their real paths: a root may itself be a symlink. */
  #roots: Promise<string[]> | undefined;

  /** Throws on a config that would make the checks meaningless; agent/config.ts reports such keys first. */
  constructor(config: BrowseConfig) {
    for (const root of config.allowedRoots) {
      if (root !== "*" && !root.startsWith("/")) throw new Error(`browse.allowedRoots: ${root} is not an absolute path`);
    }
    for (const key of ["maxDirEntries", "maxSampleLines", "maxSampleBytes"] as const) {
      if (!Number.isSafeInteger(config[key]) || config[key] < 1) throw new Error(`browse.${key} must be a positive integer`);
    }
    this.#config = config;
    this.#deny = new DenyList(config.denyPatterns);
    this.#wholeFilesystem = config.allowedRoots.some((root) => root === "*" || normalize(root) === "/");
  }

  async list(path: string): Promise<BrowseListing> {
    this.#refuseIfDisabled();
    const checked = await this.#check(path);
    const dir = await openDirectory(checked);
    try {
      const { names, truncated } = await this.#readNames(dir, checked);
      const entries = await Promise.all(names.map((name) => entryOf(dir, name)));
      return { path: checked.requested, entries: entries.filter((e) => e !== null), truncated };
    } finally {
      await dir.close();
    }
  }

  async sample(path: string, mode: SampleMode, from: SampleFrom): Promise<BrowseSample> {
    this.#refuseIfDisabled();
    if (mode !== "lines" && mode !== "bytes") throw new BrowseError("bad_request", "mode must be lines or bytes");
    if (from !== "head" && from !== "tail") throw new BrowseError("bad_request", "from must be head or tail");
    const checked = await this.#check(path);
    const handle = await openFile(checked);
    try {
      // Checked on the open descriptor: the link count of exactly what is read.
      const size = refuseHardLink(refuseNonFile(await handle.stat(), checked.requested), checked.requested).size;
      const { maxSampleBytes, maxSampleLines } = this.#config;
      const slice =
        mode === "bytes"
          ? await sampleBytes(handle, size, from, maxSampleBytes)
          : from === "head"
            ? await headLines(handle, size, maxSampleBytes, maxSampleLines)
            : await tailLines(handle, size, maxSampleBytes, maxSampleLines);
      return toSample(checked.requested, mode, from, size, slice);
    } finally {
      await handle.close();
    }
  }

  #refuseIfDisabled(): void {
    if (!this.#config.enabled) throw new BrowseError("browse_disabled", DISABLED_MESSAGE);
  }

  /** Steps 2 and 3 of the module comment; touches the filesystem only after the requested path passed. */
  async #check(path: string): Promise<CheckedPath> {
    const requested = validatePath(path);
    const roots = await this.#resolvedRoots();
    this.#refuse(requested, requested, roots);
    const real = await realpath(requested).catch((e: unknown) => {
      throw fsError(e, requested);
    });
    this.#refuse(real, requested, roots);
    return { requested, real };
  }

  #refuse(path: string, requested: string, roots: string[]): void {
    const shown = path === requested ? requested : `${requested} (resolves to ${path})`;
    if (!this.#wholeFilesystem && !roots.some((root) => isInside(path, root))) {
      throw new BrowseError("outside_allowed_roots", `${shown} is outside the allowed roots (${this.#config.allowedRoots.join(", ")})`);
    }
    const pattern = this.#deny.deniedBy(path);
    if (pattern !== undefined) throw new BrowseError("denied_by_pattern", `${shown} matches the deny pattern ${pattern}`);
  }

  /** Resolved on first use; a root missing then keeps its configured spelling. */
  #resolvedRoots(): Promise<string[]> {
    this.#roots ??= Promise.all(
      this.#config.allowedRoots
        .filter((root) => root !== "*")
        .map(async (root) => {
          const lexical = trimSlash(normalize(root));
          const real = await realpath(lexical).catch(() => lexical);
          return [lexical, real];
        }),
    ).then((pairs) => [...new Set(pairs.flat())]);
    return this.#roots;
  }

  /**
   * Up to maxDirEntries allowed names, sorted; stops at the first name past that, to know
   * it truncated. Bun's Dir (1.4) still reads the whole directory on its first read: about
   * 45 ms and 50 MiB of transient RSS for 100,000 entries. The loop is ready for a lazy Dir.
   */
  async #readNames(dir: FileHandle, { requested, real }: CheckedPath): Promise<{ names: string[]; truncated: boolean }> {
    const names: string[] = [];
    let truncated = false;
    const reader = await opendir(fdPath(dir), { bufferSize: 256 });
    try {
      for (let dirent = await reader.read(); dirent !== null; dirent = await reader.read()) {
        const { name } = dirent;
        const denied = this.#deny.deniedAt(name, childOf(requested, name)) ?? this.#deny.deniedAt(name, childOf(real, name));
        if (denied !== undefined) continue;
        if (names.length === this.#config.maxDirEntries) {
          truncated = true;
          break;
        }
        names.push(name);
      }
    } finally {
      await reader.close();
    }
    return { names: names.sort(), truncated };
  }
}

function validatePath(path: string): string {
  if (typeof path !== "string" || !path.startsWith("/")) throw new BrowseError("bad_request", "path must be absolute");
  if (path.includes("\0")) throw new BrowseError("bad_request", "path must not contain NUL bytes");
  if (path.length > MAX_PATH_LENGTH) throw new BrowseError("bad_request", `path must be at most ${MAX_PATH_LENGTH} characters`);
  return trimSlash(normalize(path));
}

function trimSlash(path: string): string {
  return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
}

/** On component boundaries: `/var/logs` is not inside `/var/log`. */
function isInside(path: string, root: string): boolean {
  return root === "/" || path === root || path.startsWith(`${root}/`);
}

function childOf(dir: string, name: string): string {
  return dir === "/" ? `/${name}` : `${dir}/${name}`;
}

/** A path naming exactly the object an open descriptor holds, whatever was renamed or swapped since. */
function fdPath(handle: FileHandle): string {
  return `/proc/self/fd/${handle.fd}`;
}

/**
 * Opens a symlink-free absolute path one component at a time, each relative to the
 * descriptor of its parent and with O_NOFOLLOW: what openat2(RESOLVE_NO_SYMLINKS)
 * would do, which node:fs does not offer. A component replaced by a symlink since the
 * checks makes the open fail.
 */
async function walk(real: string): Promise<FileHandle> {
  let dir = await open("/", DIR_FLAGS);
  try {
    for (const name of real.split("/")) {
      if (name === "") continue;
      const next = await open(childOf(fdPath(dir), name), DIR_FLAGS);
      await dir.close();
      dir = next;
    }
    return dir;
  } catch (e) {
    await dir.close();
    throw e;
  }
}

async function openDirectory({ requested, real }: CheckedPath): Promise<FileHandle> {
  return walk(real).catch((e: unknown) => {
    throw (e as NodeJS.ErrnoException).code === "ENOTDIR" ? new BrowseError("not_a_directory", `${requested} is not a directory`) : fsError(e, requested);
  });
}

/** lstat first, through the parent's descriptor: opening a fifo blocks and opening a device can act on it. */
async function openFile({ requested, real }: CheckedPath): Promise<FileHandle> {
  const parent = await walk(dirname(real)).catch((e: unknown) => {
    throw fsError(e, requested);
  });
  try {
    const path = childOf(fdPath(parent), basename(real));
    refuseNonFile(await lstat(path), requested);
    return await open(path, FILE_FLAGS);
  } catch (e) {
    throw e instanceof BrowseError ? e : fsError(e, requested);
  } finally {
    await parent.close();
  }
}

function refuseNonFile(stats: Stats, path: string): Stats {
  if (stats.isFile()) return stats;
  if (stats.isDirectory()) throw new BrowseError("not_a_file", `${path} is a directory`);
  throw new BrowseError("special_file", `${path} is a ${specialKind(stats)}, not a regular file`);
}

/** A file reachable by another name is refused: that name may be outside the roots or denied, and nothing here can tell. */
function refuseHardLink(stats: Stats, path: string): Stats {
  if (stats.nlink <= 1) return stats;
  throw new BrowseError(
    "hard_link",
    `${path} has ${stats.nlink} hard links; another of its names may be outside the allowed roots or denied, so it is not sampled`,
  );
}

function specialKind(stats: Stats): string {
  if (stats.isFIFO()) return "fifo";
  if (stats.isSocket()) return "socket";
  if (stats.isCharacterDevice()) return "character device";
  if (stats.isBlockDevice()) return "block device";
  return stats.isSymbolicLink() ? "symbolic link" : "special file";
}

/** An entry's lstat through the directory's descriptor; null when it vanished since the read. */
async function entryOf(dir: FileHandle, name: string): Promise<BrowseEntry | null> {
  try {
    const stats = await lstat(childOf(fdPath(dir), name));
    return { name, type: entryType(stats), size: stats.size, modifiedAt: stats.mtime.toISOString() };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw fsError(e, name);
  }
}

function entryType(stats: Stats): BrowseEntry["type"] {
  if (stats.isFile()) return "file";
  if (stats.isDirectory()) return "directory";
  return stats.isSymbolicLink() ? "symlink" : "other";
}

function fsError(e: unknown, path: string): BrowseError {
  if (e instanceof BrowseError) return e;
  const code = (e as NodeJS.ErrnoException).code;
  switch (code) {
    case "ENOENT":
    case "ENOTDIR":
      return new BrowseError("not_found", `${path}: no such file or directory`);
    case "EACCES":
    case "EPERM":
      return new BrowseError("permission_denied", `${path}: permission denied`);
    case "ELOOP":
      return new BrowseError("not_found", `${path}: too many levels of symbolic links (a symlink loop?)`);
    case "ENAMETOOLONG":
      return new BrowseError("bad_request", `${path}: name too long`);
    default:
      return new BrowseError("internal", `${path}: ${code ?? (e instanceof Error ? e.message : String(e))}`);
  }
}

/** Fills `length` bytes or fails: a file shrinking under us must not leave stale buffer bytes in a sample. */
async function readAt(handle: FileHandle, buf: Buffer, offset: number, length: number, position: number): Promise<void> {
  for (let done = 0; done < length; ) {
    const { bytesRead } = await handle.read(buf, offset + done, length - done, position + done);
    if (bytesRead === 0) throw new BrowseError("internal", "the file shrank while it was sampled; try again");
    done += bytesRead;
  }
}

async function sampleBytes(handle: FileHandle, size: number, from: SampleFrom, maxBytes: number): Promise<Slice> {
  const length = Math.min(size, maxBytes);
  const offset = from === "head" ? 0 : size - length;
  const bytes = Buffer.allocUnsafe(length);
  await readAt(handle, bytes, 0, length, offset);
  const skip = offset > 0 ? continuationBytes(bytes) : 0;
  return { bytes: bytes.subarray(skip), offset: offset + skip, lines: 0, read: bytes };
}

/** Leading UTF-8 continuation bytes (at most 3): the tail of a character cut by the window. */
function continuationBytes(bytes: Buffer): number {
  let n = 0;
  while (n < 3 && n < bytes.length && (bytes[n]! & 0xc0) === 0x80) n++;
  return n;
}

/** The first maxLines whole lines within the first maxBytes; a line the window cuts is left out. */
async function headLines(handle: FileHandle, size: number, maxBytes: number, maxLines: number): Promise<Slice> {
  const window = Math.min(size, maxBytes);
  const buf = Buffer.allocUnsafe(window);
  let filled = 0;
  let found = 0;
  let end = 0; // just past the last newline found
  while (filled < window && found < maxLines) {
    const n = Math.min(CHUNK_BYTES, window - filled);
    await readAt(handle, buf, filled, n, filled);
    filled += n;
    const read = buf.subarray(0, filled);
    for (let i = read.indexOf(NL, end); i !== -1 && found < maxLines; i = read.indexOf(NL, end)) {
      found++;
      end = i + 1;
    }
  }
  const whole = found < maxLines && window === size;
  const stop = whole ? size : end;
  return { bytes: buf.subarray(0, stop), offset: 0, lines: found + (whole && end < size ? 1 : 0), read: buf.subarray(0, filled) };
}

/**
 * The last maxLines whole lines within the last maxBytes, read backwards in chunks.
 * The window carries one byte before those maxBytes, so a first line that starts
 * exactly at the window's edge is known to be whole; a partial first line is dropped.
 */
async function tailLines(handle: FileHandle, size: number, maxBytes: number, maxLines: number): Promise<Slice> {
  const whole = size <= maxBytes;
  const window = whole ? size : maxBytes + 1;
  const buf = Buffer.allocUnsafe(window);
  let filled = 0;
  let found = 0;
  let scan = window; // newlines before this index are still to be counted
  while (filled < window && found < maxLines) {
    const n = Math.min(CHUNK_BYTES, window - filled);
    const low = window - filled - n;
    await readAt(handle, buf, low, n, size - filled - n);
    if (filled === 0 && buf[window - 1] === NL) scan = window - 1; // the last line's own terminator
    filled += n;
    for (let i = lastNewline(buf, low, scan); i !== -1 && found < maxLines; i = lastNewline(buf, low, scan)) {
      found++;
      scan = i;
    }
  }
  const read = buf.subarray(window - filled);
  if (found < maxLines && whole) return { bytes: buf, offset: 0, lines: size === 0 ? 0 : found + 1, read };
  const start = found === 0 ? window : scan + 1;
  return { bytes: buf.subarray(start), offset: size - window + start, lines: found, read };
}

/** The last newline in buf[low, before), or -1; never looks at the unread bytes below `low`. */
function lastNewline(buf: Buffer, low: number, before: number): number {
  const i = buf.subarray(low, before).lastIndexOf(NL);
  return i === -1 ? -1 : low + i;
}

/** Binary: a NUL anywhere in what was read (even where no whole line was found), or mostly invalid UTF-8. */
function toSample(path: string, mode: SampleMode, from: SampleFrom, size: number, slice: Slice): BrowseSample {
  const { bytes, offset } = slice;
  const truncated = offset > 0 || offset + bytes.length < size;
  // A head cut in bytes mode may split a character at the end: `stream` holds those bytes back.
  const text = new TextDecoder().decode(bytes, { stream: offset + bytes.length < size });
  const binary = slice.read.includes(0) || invalidShare(text) > BINARY_INVALID_SHARE;
  return { path, mode, from, size, binary, content: binary ? "" : text, lines: binary ? 0 : slice.lines, truncated };
}

function invalidShare(text: string): number {
  let invalid = 0;
  for (let i = text.indexOf("\uFFFD"); i !== -1; i = text.indexOf("\uFFFD", i + 1)) invalid++;
  return text.length === 0 ? 0 : invalid / text.length;
}
