/**
 * Where the secrets key comes from. In order: `secrets.key` (SVC_SECRETS_KEY,
 * the key itself), `secrets.keyFile` (a file holding it), and, for the
 * embedded store only, `secrets.key` beside the state file, created on first
 * start. Replicas of an external store must share one key, so there the
 * server never makes one up (config validation refuses to start without it).
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, statSync, writeSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { dirname, join } from "node:path";
import type { Logger } from "pino";
import { KEY_BYTES, parseKey, Secrets } from "./secrets.ts";

export interface KeySource {
  /** Base64 of 32 bytes, or "". */
  key: string;
  /** Path of a file holding the base64 key, or "". */
  keyFile: string;
  backend: "embedded" | "external";
  boltPath: string;
}

/** The generated key of an embedded store: beside its state file. */
export function defaultKeyFile(boltPath: string): string {
  return join(dirname(boltPath), "secrets.key");
}

/** A key file that cannot be read, or does not hold a key. */
export class KeyFileError extends Error {}

export function readKeyFile(path: string): Buffer {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new KeyFileError(`cannot read the secrets key file ${path}: ${(error as Error).message}`);
  }
  const key = parseKey(text);
  if (!key) throw new KeyFileError(`the secrets key file ${path} must hold the base64 of ${KEY_BYTES} random bytes (e.g. from 'openssl rand -base64 32')`);
  return key;
}

/** The server's keyring; creates the embedded default key file when there is none yet (0600, logged). */
export function loadSecrets(source: KeySource, logger: Pick<Logger, "info" | "warn">): Secrets {
  if (source.key !== "") {
    const key = parseKey(source.key);
    if (!key) throw new KeyFileError(`secrets.key must be the base64 of ${KEY_BYTES} bytes`);
    return new Secrets([key]);
  }
  if (source.keyFile !== "") return new Secrets([checked(source.keyFile, logger)]);
  if (source.backend === "external") {
    throw new KeyFileError("storage.backend is external: set secrets.keyFile or SVC_SECRETS_KEY to the key every replica shares");
  }
  const path = defaultKeyFile(source.boltPath);
  if (existsSync(path)) return new Secrets([checked(path, logger)]);
  mkdirSync(dirname(path), { recursive: true });
  const key = randomBytes(KEY_BYTES);
  // "wx": two servers starting on one directory must not each write a key.
  let fd: number;
  try {
    fd = openSync(path, "wx", 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return new Secrets([checked(path, logger)]);
    throw new KeyFileError(`cannot create the secrets key file ${path}: ${(error as Error).message}`);
  }
  try {
    writeSync(fd, key.toString("base64") + "\n");
    // On disk before anything is sealed with it: a crash must not leave an empty key file beside sealed data.
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  logger.info({ path }, "created the secrets key (keep it with the state file's backups; without it sealed secrets cannot be read)");
  return new Secrets([key]);
}

function checked(path: string, logger: Pick<Logger, "warn">): Buffer {
  const key = readKeyFile(path);
  if (process.platform !== "win32" && (statSync(path).mode & 0o077) !== 0) {
    logger.warn({ path }, "the secrets key file is readable by other users; chmod 600 it");
  }
  return key;
}
