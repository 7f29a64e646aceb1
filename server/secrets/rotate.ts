/**
 * `svc-server secrets rotate-key`: every sealed value in the store (the
 * `sealed` field of any document, bound to `<collection>/<id>`) opened and
 * sealed again under the target key, audited with key ids and a count.
 *
 * Embedded store (the server stopped, the state lock held): the target key is
 * staged at `<key file>.next` first (generated, or copied from
 * --new-key-file), which the server's keyring also opens, so a crash at any
 * moment leaves every value readable and running the command again finishes
 * the job; only when nothing is sealed under another key does `.next`
 * replace the key file.
 *
 * External store (replicas keep running, each reads its keys at start): the
 * target is the key the configuration seals with. Replicas rotate in steps
 * (README "Rotating the secrets key"): every replica first opens with the new
 * key, then seals with it, and only then does this command re-seal what older
 * keys sealed, so no replica ever meets a value it cannot open.
 */
import { randomBytes } from "node:crypto";
import { existsSync, renameSync } from "node:fs";
import { dirname } from "node:path";
import type { Logger } from "pino";
import { auditEntry, type Actor } from "../audit/audit.ts";
import { ConflictError } from "../errors.ts";
import { scan } from "../store/scan.ts";
import type { Doc, Store, WriteOp } from "../store/store.ts";
import { syncDir } from "../lib/private-file.ts";
import { sealedKeys } from "./sealed-keys.ts";
import { createKeyFile, keyringKeys, NEXT_KEY_SUFFIX, readKeyFile, sealingKeyFile, type KeySource } from "./key.ts";
import { isSealed, KEY_BYTES, keyId, SEALED_FIELD, sealedKeyId, Secrets, SecretsError } from "./secrets.ts";

/** A rotation that cannot start or finish; the message says why and what to do. */
export class RotationError extends Error {}

export interface RotationPlan {
  /** Seals with the target key; opens with it and every key the configuration names. */
  keyring: Secrets;
  /** The staged `.next` file to move over `keyFile` once everything is re-sealed, or null. */
  staged: string | null;
  keyFile: string | null;
}

/**
 * The target key and keyring. `newKeyFile` names the key to rotate to; without
 * it, the embedded store resumes a staged `.next` or generates one, and the
 * external store re-seals under the key it is configured with.
 */
export function planRotation(source: KeySource, newKeyFile: string | undefined, logger: Pick<Logger, "info" | "warn">): RotationPlan {
  const keys = keyringKeys(source, logger);
  const keyFile = sealingKeyFile(source);
  const wanted = newKeyFile === undefined ? null : readKeyFile(newKeyFile);
  if (source.backend === "external") {
    if (wanted !== null && keyId(wanted) !== keyId(keys[0]!)) {
      throw new RotationError(
        `on the external store, rotate-key re-seals under the key the configuration seals with (${keyId(keys[0]!)}), not ${keyId(wanted)}: ` +
          "first make every replica open with the new key, then seal with it (README, Rotating the secrets key), then run rotate-key without --new-key-file",
      );
    }
    return { keyring: new Secrets(keys), staged: null, keyFile };
  }
  if (keyFile === null) {
    if (wanted === null) throw new RotationError("secrets.key (SVC_SECRETS_KEY) gives the key itself: name the key to rotate to with --new-key-file");
    return { keyring: new Secrets([wanted, ...keys]), staged: null, keyFile };
  }
  const next = keyFile + NEXT_KEY_SUFFIX;
  if (existsSync(next)) {
    const staged = readKeyFile(next);
    if (wanted !== null && keyId(wanted) !== keyId(staged)) {
      throw new RotationError(
        `${next} stages an unfinished rotation to key ${keyId(staged)}: finish it by running rotate-key without --new-key-file, then rotate to ${newKeyFile}`,
      );
    }
    return { keyring: new Secrets([staged, ...keys]), staged: next, keyFile };
  }
  const target = wanted ?? randomBytes(KEY_BYTES);
  try {
    createKeyFile(next, target);
  } catch (error) {
    throw new RotationError(`${(error as Error).message} (the new key is staged beside ${keyFile} before anything is sealed with it)`);
  }
  return { keyring: new Secrets([target, ...keys]), staged: next, keyFile };
}

export interface RotationOutcome {
  /** Values re-sealed, by the id of the key that had sealed them. */
  from: Record<string, number>;
  to: string;
  count: number;
  /**
   * `<collection>/<id>` of values no key opens (sealed under a key that is
   * lost, or altered): left as they are, as unreadable as before. Putting
   * their key at `<key file>.previous` and rotating again re-seals them.
   */
  unreadable: string[];
}

/** Documents re-sealed per store write. */
const BATCH = 100;
/** Attempts at a batch whose documents other writers keep changing. */
const ATTEMPTS = 16;

/** Re-seals every sealed value in `store` under `keyring`'s sealing key, then checks none is left under another key; audited. */
export async function resealAll(store: Store, keyring: Secrets, who: Actor, now = new Date()): Promise<RotationOutcome> {
  const from: Record<string, number> = {};
  const unreadable = new Set<string>();
  /** The envelope of a document still sealed under another key, or null. */
  const stale = (doc: Doc): string | null => {
    const sealed = (doc.data as Record<string, unknown> | null)?.[SEALED_FIELD];
    return isSealed(sealed) && sealedKeyId(sealed) !== keyring.keyId ? sealed : null;
  };
  const write = async (collection: string, docs: Doc[]) => {
    for (let attempt = 1; ; attempt++) {
      const ops: WriteOp[] = [];
      const keys: string[] = [];
      for (const doc of docs) {
        const sealed = stale(doc);
        const context = `${collection}/${doc.id}`;
        if (sealed === null || unreadable.has(context)) continue;
        let plaintext: Buffer;
        try {
          plaintext = keyring.open(sealed, context);
        } catch (error) {
          if (!(error instanceof SecretsError)) throw error;
          unreadable.add(context);
          continue;
        }
        const data = { ...(doc.data as Record<string, unknown>), [SEALED_FIELD]: keyring.seal(plaintext, context) };
        ops.push({ op: "put", collection, id: doc.id, data, expect: doc.version });
        keys.push(sealedKeyId(sealed) ?? "unknown");
      }
      if (ops.length === 0) return;
      try {
        await store.write(ops);
        for (const id of keys) from[id] = (from[id] ?? 0) + 1;
        return;
      } catch (error) {
        if (!(error instanceof ConflictError && error.code === "version_conflict") || attempt >= ATTEMPTS) throw error;
        docs = [
          ...(
            await store.getMany(
              collection,
              docs.map((d) => d.id),
            )
          ).values(),
        ];
      }
    }
  };
  for (const collection of await store.collections()) {
    let batch: Doc[] = [];
    for await (const doc of scan(store, collection)) {
      if (stale(doc) === null) continue;
      batch.push(doc);
      if (batch.length >= BATCH) {
        await write(collection, batch);
        batch = [];
      }
    }
    if (batch.length > 0) await write(collection, batch);
  }
  // Envelopes elsewhere than a document's `sealed` field, or sealed meanwhile by a replica still sealing with an old key.
  const left = [...(await sealedKeys(store))].filter(([id]) => id !== keyring.keyId);
  if (left.reduce((n, [, c]) => n + c, 0) > unreadable.size) {
    throw new RotationError(
      `sealed values are still under key ${left.map(([id]) => id).join(", ")} after re-sealing: ` +
        "if a replica still seals with another key, make it seal with the new one and run rotate-key again",
    );
  }
  const count = Object.values(from).reduce((n, c) => n + c, 0);
  const details = { from, to: keyring.keyId, count, unreadable: unreadable.size };
  await store.write([], [auditEntry(who, "secrets.rotate_key", "secrets_key", keyring.keyId, details, "success", now)]);
  return { from, to: keyring.keyId, count, unreadable: [...unreadable] };
}

/** Moves the staged key over the key file: from now on it is the only key needed. */
export function finishRotation(plan: RotationPlan): void {
  if (plan.staged === null || plan.keyFile === null) return;
  renameSync(plan.staged, plan.keyFile);
  syncDir(dirname(plan.keyFile));
}
