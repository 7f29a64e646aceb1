/**
 * Files only the server's user may read (the secrets key, the first UI admin
 * password), made durable before anyone is told of them.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, writeSync } from "node:fs";
import { dirname } from "node:path";

/**
 * Writes `text` to a new file at `path` (0600, its directory made when
 * missing), synced with its directory. False when the file exists already;
 * any other failure throws.
 */
export function createPrivateFile(path: string, text: string): boolean {
  mkdirSync(dirname(path), { recursive: true });
  let fd: number;
  try {
    fd = openSync(path, "wx", 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  syncDir(dirname(path));
  return true;
}

/** Makes a file created, renamed or removed in `dir` survive a power cut. */
export function syncDir(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
