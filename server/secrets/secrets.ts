/**
 * Secrets at rest: values svc must be able to read back (a collector's
 * current token, the credentials in sources and destinations) are sealed with
 * AES-256-GCM under the server's secrets key before they reach the store.
 *
 * An envelope is one ASCII string, `svcsec:v1:<keyId>:<base64url(nonce ‖ ciphertext ‖ tag)>`:
 * - `v1` names the format (96-bit random nonce, 128-bit tag), so another can follow;
 * - `keyId` names the key that sealed it (the first 8 bytes of SHA-256 of the
 *   key, hex), so a keyring can hold old keys for opening while a new one seals;
 * - the caller's `context` (e.g. `collector_tokens/<id>`) is authenticated as
 *   associated data, so a sealed value copied into another document does not open.
 *
 * Nothing here knows what is sealed; plaintexts are never logged or put in errors.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes, timingSafeEqual } from "node:crypto";

export const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const PREFIX = "svcsec:";
const FORMAT = "v1";

/** A sealed value that cannot be opened: wrong key, tampered, or not an envelope. */
export class SecretsError extends Error {
  constructor(
    message: string,
    /** `unknown_key`: sealed under a key this server does not hold; `corrupt`: altered or not an envelope. */
    readonly code: "unknown_key" | "corrupt",
  ) {
    super(message);
    this.name = "SecretsError";
  }
}

/** The short, public name of a key: it tells keys apart without revealing them. */
export function keyId(key: Uint8Array): string {
  return createHash("sha256").update(key).digest("hex").slice(0, 16);
}

/** Whether `value` has the shape of an envelope (it may still fail to open). */
export function isSealed(value: unknown): value is string {
  return typeof value === "string" && value.startsWith(PREFIX);
}

/** The field a document keeps a sealed value under (e.g. collector_tokens' `sealed`); migrate looks for envelopes there only. */
export const SEALED_FIELD = "sealed";

/** The id of the key an envelope was sealed with, or null for a value that is no envelope. */
export function sealedKeyId(value: string): string | null {
  return /^svcsec:v\d+:([0-9a-f]{16}):/.exec(value)?.[1] ?? null;
}

export class Secrets {
  private readonly keys = new Map<string, Buffer>();
  private readonly current: string;

  /** `keys[0]` seals; every key opens what it sealed. */
  constructor(keys: readonly Uint8Array[]) {
    if (keys.length === 0) throw new Error("Secrets needs at least one key");
    for (const key of keys) {
      if (key.byteLength !== KEY_BYTES) throw new Error(`a secrets key is ${KEY_BYTES} bytes, not ${key.byteLength}`);
      this.keys.set(keyId(key), Buffer.from(key));
    }
    this.current = keyId(keys[0]!);
  }

  /** The id of the key that seals. */
  get keyId(): string {
    return this.current;
  }

  seal(plaintext: string | Uint8Array, context: string): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.keys.get(this.current)!, nonce, { authTagLength: TAG_BYTES });
    cipher.setAAD(aad(this.current, context));
    const body = Buffer.concat([nonce, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
    return `${PREFIX}${FORMAT}:${this.current}:${body.toString("base64url")}`;
  }

  open(envelope: string, context: string): Buffer {
    const match = /^svcsec:v1:([0-9a-f]{16}):([A-Za-z0-9_-]+)$/.exec(envelope);
    if (!match) throw new SecretsError("the sealed value is not a v1 envelope", "corrupt");
    const [, id, encoded] = match as unknown as [string, string, string];
    const key = this.keys.get(id);
    if (!key) throw new SecretsError(`the value was sealed with key ${id}, which this server does not hold (its key is ${this.current})`, "unknown_key");
    const body = Buffer.from(encoded, "base64url");
    if (body.byteLength < NONCE_BYTES + TAG_BYTES) throw new SecretsError("the sealed value is truncated", "corrupt");
    const decipher = createDecipheriv("aes-256-gcm", key, body.subarray(0, NONCE_BYTES), { authTagLength: TAG_BYTES });
    decipher.setAAD(aad(id, context));
    decipher.setAuthTag(body.subarray(body.byteLength - TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(body.subarray(NONCE_BYTES, body.byteLength - TAG_BYTES)), decipher.final()]);
    } catch {
      throw new SecretsError("the sealed value does not authenticate (altered, or sealed for another document)", "corrupt");
    }
  }

  openString(envelope: string, context: string): string {
    return this.open(envelope, context).toString("utf8");
  }

  /** Whether this keyring holds the same sealing key as `other` (compared in constant time). */
  sameKey(other: Secrets): boolean {
    return timingSafeEqual(this.keys.get(this.current)!, other.keys.get(other.current)!);
  }
}

/** The format, key id and caller's context, bound to the ciphertext. */
function aad(id: string, context: string): Buffer {
  return Buffer.from(`${FORMAT}\0${id}\0${context}`, "utf8");
}

/** The key written as base64 (standard or URL-safe) of exactly 32 bytes, or null when it is not. */
export function parseKey(text: string): Buffer | null {
  const trimmed = text.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) return null;
  const key = Buffer.from(trimmed.replaceAll("-", "+").replaceAll("_", "/"), "base64");
  return key.byteLength === KEY_BYTES ? key : null;
}
