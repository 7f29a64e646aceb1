/**
 * Where the secrets key comes from. In order: `secrets.key` (SVC_SECRETS_KEY,
 * the key itself), `secrets.keyFile` (a file holding it), and, for the
 * embedded store only, `secrets.key` beside the state file, created on first
 * start. Replicas of an external store must share one key, so there the
 * server never makes one up (config validation refuses to start without it).
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { dirname, join } from "node:path";
import type { Logger } from "pino";
import { createPrivateFile } from "../lib/private-file.ts";
import { KEY_BYTES, keyId, parseKey, Secrets } from "./secrets.ts";

export interface KeySource {
  /** Base64 of 32 bytes, or "". */
  key: string;
  /** Path of a file holding the base64 key, or "". */
  keyFile: string;
  backend: "embedded" | "external";
  boltPath: string;
}

/**
 * Where a server's configuration (a ServerConfig) says its key comes from. Typed by
 * the fields it reads, since config/load.ts imports this module to check the key file.
 */
export function keySource(config: { secrets: Pick<KeySource, "key" | "keyFile">; storage: Pick<KeySource, "backend" | "boltPath"> }): KeySource {
  return { ...config.secrets, backend: config.storage.backend, boltPath: config.storage.boltPath };
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

/**
 * Key files beside the sealing key file that the keyring opens with but
 * never seals with: `.next` holds a key being rotated to (`secrets
 * rotate-key` stages it there first, so a crash mid-rotation leaves every
 * value readable), `.previous` one rotated from (replicas of an external
 * store rotate in steps, see README "Rotating the secrets key").
 */
export const NEXT_KEY_SUFFIX = ".next";
export const PREVIOUS_KEY_SUFFIX = ".previous";

/** The file the sealing key comes from: secrets.keyFile, else the embedded default; null when secrets.key gives the key itself. */
export function sealingKeyFile(source: KeySource): string | null {
  if (source.key !== "") return null;
  if (source.keyFile !== "") return source.keyFile;
  if (source.backend === "external") {
    throw new KeyFileError("storage.backend is external: set secrets.keyFile or SVC_SECRETS_KEY to the key every replica shares");
  }
  return defaultKeyFile(source.boltPath);
}

/**
 * The server's keys, the sealing one first, then the `.next` and `.previous`
 * files beside its key file when present. Creates the embedded default key
 * file when there is none yet (0600, logged), and tells `created` its path:
 * on a store that already holds sealed values the file was lost, not never
 * made, and the caller must not go on with the new key (main.ts).
 */
export function keyringKeys(source: KeySource, logger: Pick<Logger, "info" | "warn">, created?: (path: string) => void): Buffer[] {
  const file = sealingKeyFile(source);
  if (file === null) {
    const key = parseKey(source.key);
    if (!key) throw new KeyFileError(`secrets.key must be the base64 of ${KEY_BYTES} bytes`);
    return [key];
  }
  let sealing: Buffer;
  if (source.keyFile === "" && !existsSync(file)) {
    sealing = randomBytes(KEY_BYTES);
    // Two servers starting on one directory must not each write a key: the one that loses reads the other's.
    if (createKeyFile(file, sealing)) {
      logger.info({ path: file }, "created the secrets key (keep it with the state file's backups; without it sealed secrets cannot be read)");
      created?.(file);
    } else {
      sealing = checked(file, logger);
    }
  } else {
    sealing = checked(file, logger);
  }
  const keys = [sealing];
  for (const suffix of [NEXT_KEY_SUFFIX, PREVIOUS_KEY_SUFFIX]) {
    if (!existsSync(file + suffix)) continue;
    const key = checked(file + suffix, logger);
    keys.push(key);
    logger.info({ path: file + suffix, keyId: keyId(key) }, "also opening secrets sealed with this key (it never seals)");
  }
  return keys;
}

/** The server's keyring: seals with the sealing key, opens with every key of `keyringKeys`. */
export function loadSecrets(source: KeySource, logger: Pick<Logger, "info" | "warn">, created?: (path: string) => void): Secrets {
  return new Secrets(keyringKeys(source, logger, created));
}

/**
 * Writes `key` to a new file at `path` (0600), synced with its directory
 * before anything can be sealed with it. False when the file exists already.
 */
export function createKeyFile(path: string, key: Uint8Array): boolean {
  try {
    return createPrivateFile(path, Buffer.from(key).toString("base64") + "\n");
  } catch (error) {
    throw new KeyFileError(`cannot create the secrets key file ${path}: ${(error as Error).message}`);
  }
}

function checked(path: string, logger: Pick<Logger, "warn">): Buffer {
  const key = readKeyFile(path);
  if (process.platform !== "win32" && (statSync(path).mode & 0o077) !== 0) {
    logger.warn({ path }, "the secrets key file is readable by other users; chmod 600 it");
  }
  return key;
}
