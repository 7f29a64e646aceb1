/**
 * Test support: a FerretDB server (test/peers/bin/ferretdb, FerretDB 1.24.2,
 * built by scripts/peers.sh) for one test file's run, on a free loopback port
 * with its SQLite backend in a temporary directory, removed after. It stops
 * with the test process too: it exits when its stdin closes.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { peer } from "./peers/peers.ts";

export interface FerretDBServer {
  /** mongodb://127.0.0.1:<port>/ */
  uri: string;
  /** Stops the server and removes its data. */
  stop(): Promise<void>;
}

/** How long FerretDB may take to print its address (it opens SQLite and binds the port first). */
const START_TIMEOUT_MS = 30_000;

export async function startFerretDB(): Promise<FerretDBServer> {
  const dir = mkdtempSync(join(tmpdir(), "svc-ferretdb-"));
  const proc = Bun.spawn([peer("ferretdb"), "-listen", "127.0.0.1:0", "-handler", "sqlite", "-sqlite-url", `file:${dir}/`], {
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  const stderr = new Response(proc.stderr).text();
  const stop = async () => {
    // SIGKILL: on SIGTERM FerretDB waits for its clients to disconnect, and a failed test may have left one open.
    proc.kill("SIGKILL");
    await proc.exited;
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const uri = await firstLine(proc.stdout, proc.exited, stderr);
    return { uri, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The first line FerretDB prints (its URI), within START_TIMEOUT_MS; a failure names what went wrong. */
async function firstLine(stdout: ReadableStream<Uint8Array>, exited: Promise<number>, stderr: Promise<string>): Promise<string> {
  const reader = stdout.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let timer: Timer | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`waited ${START_TIMEOUT_MS} ms in vain for FerretDB to print its address`)), START_TIMEOUT_MS);
  });
  const died = exited.then(async (code) => {
    throw new Error(`FerretDB exited (${code}) before it printed its address: ${(await stderr).trim()}`);
  });
  try {
    while (!text.includes("\n")) {
      const chunk = await Promise.race([reader.read(), late, died]);
      if (chunk.done) break;
      text += decoder.decode(chunk.value, { stream: true });
    }
  } finally {
    clearTimeout(timer);
    died.catch(() => {});
    reader.releaseLock();
  }
  const uri = text.split("\n")[0]!.trim();
  if (!uri.startsWith("mongodb://")) throw new Error(`FerretDB printed ${JSON.stringify(uri)} instead of its address`);
  return uri;
}
