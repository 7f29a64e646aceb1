/**
 * One process per embedded store. Two servers on one `storage.boltPath`
 * would each cache the working tree and move the git branch, losing each
 * other's commits; the second one must refuse to start, naming the first.
 *
 * The lock is SQLite's own: a small database beside the state file, held in
 * an open exclusive transaction, is an exclusive file lock for as long as
 * this process keeps it open. The kernel drops it when the
 * process dies, even by kill -9, so a crash never leaves a stale lock. The
 * holder then writes who it is to `<lock>.owner`, read for the refusal
 * message only (the locked database cannot be read by others).
 */
import { Database } from "bun:sqlite";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { hostname } from "node:os";

export interface StateLock {
  readonly path: string;
  release(): void;
}

/** Open locks: referenced here so the garbage collector never closes one (closing drops the lock). */
const held = new Set<Database>();

export class StateLockedError extends Error {}

/** Takes the lock for `boltPath`, or throws StateLockedError naming the process holding it. */
export function lockState(boltPath: string): StateLock {
  const path = `${boltPath}.lock`;
  mkdirSync(dirname(path), { recursive: true });
  const db = new Database(path, { create: true });
  try {
    // The table gives the file a database header to lock (written once, on first use); the
    // transaction takes the exclusive lock without writing, so it is taken on a full disk too.
    db.run("CREATE TABLE IF NOT EXISTS lock (held INTEGER)");
    db.run("BEGIN EXCLUSIVE");
  } catch (error) {
    db.close();
    if ((error as { code?: string }).code !== "SQLITE_BUSY") throw error;
    throw new StateLockedError(
      `the embedded store at ${boltPath} (storage.boltPath) is in use by another svc server (${owner(path)}); ` +
        "stop it first, or give this server its own storage.boltPath (two servers on one embedded store lose each other's commits; run replicas on storage.backend external)",
    );
  }
  held.add(db);
  try {
    writeFileSync(`${path}.owner`, JSON.stringify({ pid: process.pid, host: hostname(), since: new Date().toISOString() }) + "\n");
  } catch {
    // Only the refusal message of a second process reads it (a full disk must not stop this one).
  }
  return {
    path,
    release() {
      if (!held.delete(db)) return;
      db.close();
    },
  };
}

/** Who holds the lock, as its owner file says. */
function owner(path: string): string {
  try {
    const { pid, host, since } = JSON.parse(readFileSync(`${path}.owner`, "utf8")) as { pid: number; host: string; since: string };
    return `pid ${pid} on ${host}, since ${since}`;
  } catch {
    return `the process holding ${path}`;
  }
}
