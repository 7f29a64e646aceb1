/**
 * Shared by the packaging tests: running the real tools (dpkg, rpm, systemd-analyze,
 * strace) with their output at hand, and reading systemd unit files.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";

export const IS_ROOT = process.getuid?.() === 0;
/** This machine's architecture in Debian's words; the tests package only this one, to stay fast. */
export const HOST_ARCH = process.arch === "arm64" ? "arm64" : "amd64";
export const RPM_ARCH = HOST_ARCH === "arm64" ? "aarch64" : "x86_64";

export interface Ran {
  code: number;
  out: string;
  err: string;
}

export function run(command: string[], options: { env?: Record<string, string | undefined>; cwd?: string } = {}): Ran {
  const result = Bun.spawnSync(command, { env: { ...process.env, ...options.env }, cwd: options.cwd, stdout: "pipe", stderr: "pipe" });
  return { code: result.exitCode, out: result.stdout.toString(), err: result.stderr.toString() };
}

/** Runs a command that must succeed and returns its stdout; a failure names the command and shows its stderr. */
export function ok(command: string[], options: { env?: Record<string, string | undefined>; cwd?: string } = {}): string {
  const result = run(command, options);
  if (result.code !== 0) throw new Error(`${command.join(" ")} exited ${result.code}\n${result.err}${result.out}`);
  return result.out;
}

export function sha256(path: string): string {
  return createHash("sha256").update(readFileSync(path)).digest("hex");
}

/** section → key → every value given for it, in order (systemd allows repeats, e.g. Environment=). */
export type UnitFile = Map<string, Map<string, string[]>>;

/** A unit file as systemd reads it; any line that is neither a comment, a section nor key=value fails. */
export function parseUnit(path: string): UnitFile {
  const unit: UnitFile = new Map();
  let section: Map<string, string[]> | undefined;
  for (const [index, raw] of readFileSync(path, "utf8").split("\n").entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const header = /^\[([A-Za-z]+)\]$/.exec(line);
    if (header) {
      section = new Map();
      unit.set(header[1]!, section);
      continue;
    }
    const pair = /^([A-Za-z]+)=(.*)$/.exec(line);
    if (!pair || !section) throw new Error(`${path}:${index + 1}: not a directive: ${raw}`);
    section.set(pair[1]!, [...(section.get(pair[1]!) ?? []), pair[2]!]);
  }
  return unit;
}

/** The values of one directive; [] when it is absent. */
export function directive(unit: UnitFile, section: string, key: string): string[] {
  return unit.get(section)?.get(key) ?? [];
}
