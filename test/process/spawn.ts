/**
 * Process-level test helper: starts the real server (`bun server/main.ts`, or
 * the compiled binary) as a child process on a free loopback port with a temp
 * state file, captures its stdout and stderr, waits for /healthz, reads the
 * first admin credential from the startup banner, and kills what it started.
 */
import type { Subprocess } from "bun";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export const REPO = resolve(import.meta.dir, "../..");
export const MAIN = join(REPO, "server/main.ts");
/** The bun running the tests; the same binary as node_modules/.bin/bun. */
export const BUN = process.execPath;

/** A fixed admin token, so a test knows the credential across restarts. */
export function bootstrapToken(): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  let out = "svcsa_";
  for (let i = 0; i < 40; i++) out += alphabet[Math.floor(Math.random() * alphabet.length)];
  return out;
}

/** A port that was free a moment ago: bind port 0, read the number, close. */
export function freePort(): number {
  const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = listener.port;
  listener.stop(true);
  return port;
}

/** True when something accepts TCP connections on 127.0.0.1:port. */
export async function isListening(port: number): Promise<boolean> {
  try {
    const socket = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } });
    socket.end();
    return true;
  } catch {
    return false;
  }
}

/** A process's resident memory in KiB: all of it, its private (anonymous) part, and its file-backed part. */
export function processMemory(pid: number): { rss: number; anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (key: string) => Number(new RegExp(`${key}:\\s+(\\d+)`).exec(status)?.[1]);
  return { rss: kib("VmRSS"), anon: kib("RssAnon"), file: kib("RssFile") };
}

const tempDirs = new Set<string>();

export function tempDir(prefix = "svc-proc-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.add(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true });
  tempDirs.clear();
}

/** Collects a child's output stream as text, and lets a test wait for a pattern in it. */
class Output {
  text = "";
  private waiters: (() => void)[] = [];
  readonly done: Promise<void>;

  constructor(stream: ReadableStream<Uint8Array>) {
    this.done = (async () => {
      const decoder = new TextDecoder();
      const reader = stream.getReader();
      try {
        for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
          this.text += decoder.decode(chunk.value, { stream: true });
          this.notify();
        }
      } catch {
        // the pipe broke with the child; what was read is kept
      }
      this.text += decoder.decode();
      this.notify();
    })();
  }

  private notify() {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  /** Resolves with the match, or null once the stream ends or the time is up. */
  async waitFor(pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray | null> {
    const deadline = Date.now() + timeoutMs;
    let ended = false;
    void this.done.then(() => (ended = true));
    for (;;) {
      const match = pattern.exec(this.text);
      if (match) return match;
      if (ended || Date.now() >= deadline) return null;
      await Promise.race([new Promise<void>((wake) => this.waiters.push(wake)), Bun.sleep(Math.max(1, Math.min(200, deadline - Date.now()))), this.done]);
    }
  }
}

export interface ServerProcess {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  port: number;
  /** http://127.0.0.1:<port> */
  base: string;
  /** The first admin credential from the banner, or null when the banner shows none. */
  bannerToken: string | null;
  /** The URL the banner says it serves at. */
  bannerUrl: string | null;
  stdout(): string;
  stderr(): string;
  /** Exit code once the process has ended (signal deaths give a non-zero code). */
  exited: Promise<number>;
  /** Sends a signal and waits for the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number>;
}

export interface StartOptions {
  /** Extra environment; a value of undefined removes the variable. */
  env?: Record<string, string | undefined>;
  /** The state file; omitted leaves SVC_STORAGE_BOLTPATH unset. */
  statePath?: string;
  cwd?: string;
  args?: string[];
  /** The program to run instead of `bun server/main.ts`, e.g. the compiled binary. */
  command?: string[];
  port?: number;
  /** Wait for /healthz and the banner (default true). */
  waitReady?: boolean;
  readyTimeoutMs?: number;
}

const live = new Set<ServerProcess>();

/** Variables the server reads; the parent's are never passed on by accident. */
function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    if (/^(SVC_|EXTERNAL_URL$|DATABASE_URI$|DOCDB_)/.test(name)) continue;
    env[name] = value;
  }
  return env;
}

/** Spawns the server; unless waitReady is false, resolves once /healthz answers and the banner is out. */
export async function startServer(options: StartOptions = {}): Promise<ServerProcess> {
  const port = options.port ?? freePort();
  const env = cleanEnv();
  env.SVC_LISTEN = `127.0.0.1:${port}`;
  if (options.statePath !== undefined) env.SVC_STORAGE_BOLTPATH = options.statePath;
  for (const [name, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) delete env[name];
    else env[name] = value;
  }
  const command = [...(options.command ?? [BUN, MAIN]), ...(options.args ?? [])];
  const proc = Bun.spawn(command, {
    cwd: options.cwd ?? REPO,
    env,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const out = new Output(proc.stdout);
  const err = new Output(proc.stderr);
  const exited = proc.exited.then(async (code) => {
    await Promise.all([out.done, err.done]);
    return code;
  });
  const server: ServerProcess = {
    proc,
    port,
    base: `http://127.0.0.1:${port}`,
    bannerToken: null,
    bannerUrl: null,
    stdout: () => out.text,
    stderr: () => err.text,
    exited,
    async stop(signal = "SIGKILL") {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      const code = await exited;
      live.delete(server);
      return code;
    },
  };
  live.add(server);
  void exited.then(() => live.delete(server));
  if (options.waitReady === false) return server;

  // A deadline for "never ready", not a start-up target (bench/startup.ts measures that): generous for a busy machine.
  const timeout = options.readyTimeoutMs ?? 30_000;
  const deadline = Date.now() + timeout;
  let healthy = false;
  let gone = false;
  void exited.then(() => (gone = true));
  while (!healthy && !gone && Date.now() < deadline) {
    try {
      const res = await fetch(`${server.base}/healthz`, { signal: AbortSignal.timeout(1000) });
      healthy = res.status === 200 && (await res.text()) === "ok\n";
    } catch {
      await Bun.sleep(50);
    }
  }
  const banner = healthy ? await out.waitFor(/^svc \S+ is serving at (\S+)$/m, Math.max(1000, deadline - Date.now())) : null;
  if (!healthy || !banner) {
    await server.stop("SIGKILL");
    throw new Error(
      `the server did not become ready within ${timeout} ms (exit ${proc.exitCode ?? proc.signalCode ?? "none"})\n` +
        `--- stdout ---\n${out.text}\n--- stderr ---\n${err.text}`,
    );
  }
  server.bannerUrl = banner[1]!;
  // The credential lines follow the serving line in one write; give them a moment anyway.
  const credential = await out.waitFor(/First admin credential[^\n]*\n\s+(svcsa_[A-Za-z0-9]+)\s*$/m, 200);
  server.bannerToken = credential ? credential[1]! : null;
  return server;
}

/**
 * Runs `bun server/main.ts <args>` (a command such as `secrets rotate-key`)
 * from the repository to its end, with PATH and HOME as the only inherited
 * variables plus `env`; its exit code and its stdout and stderr as text.
 */
export async function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string; err: string }> {
  const proc = Bun.spawn([BUN, MAIN, ...args], {
    cwd: REPO,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/root", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, out, err };
}

/**
 * The first web UI admin's password, read from the file the banner names (the
 * server never prints it); null when the banner names none.
 */
export function bannerUiPassword(stdout: string): string | null {
  const path = /^UI login: admin, password in (\S+)$/m.exec(stdout)?.[1];
  return path === undefined ? null : readFileSync(path, "utf8").trim();
}

/** Kills (SIGKILL) every server this helper started that is still running. */
export async function killAll(): Promise<void> {
  await Promise.all([...live].map((server) => server.stop("SIGKILL")));
}

export { api } from "../client.ts";
