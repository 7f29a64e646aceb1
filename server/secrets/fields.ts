/**
 * Sensitive values between the API and the git tree (forms: values.ts). A
 * write arrives in the API's forms and is stored in the tree's: a keep
 * marker becomes what is stored at its path, a plaintext is sealed into the
 * vault and the tree names its version. A read shows each stored secret as
 * its summary: never the plaintext, and never the id either, which would let
 * a reader tell which records share a value or follow one through history.
 */
import type { TSchema } from "@sinclair/typebox";
import { auditEntry, type Actor } from "../audit/audit.ts";
import { ValidationError, type ErrorDetail } from "../errors.ts";
import type { AuditEntry, WriteOp } from "../store/store.ts";
import { MissingSecretError, type SecretVault } from "./vault.ts";
import { isKeepMarker, isSecretRef, pathText, sensitiveLeaves, valueAt, withValueAt, type SecretRef } from "../../shared/sensitive.ts";
import { secretSummary } from "./values.ts";

type Config = Record<string, unknown>;

/**
 * `input` with every keep marker (`{secret: true, …}`) replaced by the
 * secret stored at the same path of `stored`; a 400 naming each path where
 * no secret is stored. A plaintext stored before secrets were kept apart
 * counts as a secret: keeping it seals it.
 */
export function keepStored(schema: TSchema, input: Config, stored: Config | undefined, root: string): Config {
  let out = input;
  const problems: ErrorDetail[] = [];
  for (const leaf of sensitiveLeaves(schema, input)) {
    if (!isKeepMarker(leaf.value)) continue;
    const kept = valueAt(stored, leaf.path);
    if (isSecretRef(kept) || typeof kept === "string") out = withValueAt(out, leaf.path, kept);
    else problems.push({ path: pathText(root, leaf.path), message: "asks to keep the stored secret, but none is stored here; send the value instead" });
  }
  const first = problems[0];
  if (first) throw new ValidationError(`There is no stored secret to keep at ${first.path}; send its value instead.`, problems);
  return out;
}

/**
 * `config` (validated) with every plaintext in a sensitive field sealed: a
 * value equal to the secret stored at the same path of `stored` keeps that
 * version (no new id, so the tree does not change); any other gets a new
 * one. `ops` store the new versions: land them in the write of the tree.
 */
export async function sealPlaintext(
  vault: SecretVault,
  who: Actor,
  schema: TSchema,
  config: Config,
  stored: Config | undefined,
): Promise<{ config: Config; ops: WriteOp[] }> {
  let out = config;
  const ops: WriteOp[] = [];
  for (const leaf of sensitiveLeaves(schema, config)) {
    if (typeof leaf.value !== "string") continue;
    const before = valueAt(stored, leaf.path);
    if (isSecretRef(before) && (await openedOrNull(vault, before.secret)) === leaf.value) {
      out = withValueAt(out, leaf.path, before);
      continue;
    }
    const { id, op } = vault.seal(leaf.value, who);
    ops.push(op);
    out = withValueAt(out, leaf.path, { secret: id } satisfies SecretRef);
  }
  return { config: out, ops };
}

/** A version the vault cannot open is never equal to a value sent: the value gets a new version. */
async function openedOrNull(vault: SecretVault, id: string): Promise<string | null> {
  try {
    return await vault.open(id);
  } catch (error) {
    if (error instanceof MissingSecretError) return null;
    throw error;
  }
}

/** Which secret a stored value is, for telling whether a write set or cleared it (a legacy plaintext is one). */
function secretAt(config: Config | undefined, path: readonly string[]): string | null {
  const value = valueAt(config, path);
  if (isSecretRef(value)) return value.secret;
  return typeof value === "string" ? `plaintext:${value}` : null;
}

/**
 * Audit entries for the secrets a write sets (a new version, or a secret
 * where there was none) and clears (a secret replaced by another form or
 * removed), between two stored configs: `secret.set` / `secret.clear` on
 * `resource`, details the path and `details` (never a value, never an id).
 */
export function secretAudit(
  who: Actor,
  schema: TSchema,
  before: Config | undefined,
  after: Config | undefined,
  resource: { type: "source" | "destination" | "collector"; id: string; root: string; details?: Record<string, unknown> },
): AuditEntry[] {
  const paths = new Map<string, string[]>();
  for (const leaf of [...sensitiveLeaves(schema, before ?? {}), ...sensitiveLeaves(schema, after ?? {})])
    paths.set(pathText(resource.root, leaf.path), leaf.path);
  const entries: AuditEntry[] = [];
  for (const [text, path] of paths) {
    const was = secretAt(before, path);
    const is = secretAt(after, path);
    if (was === is) continue;
    const action = is !== null ? "secret.set" : "secret.clear";
    entries.push(auditEntry(who, action, resource.type, resource.id, { path: text, ...resource.details }));
  }
  return entries;
}

/**
 * What a read shows of a plaintext stored before secrets were kept apart
 * (the server moves these to the vault at start): set, time unknown.
 */
const LEGACY_SUMMARY = { secret: true, set: true, updatedAt: null } as const;

/** `config` as the API reads it: each stored secret as its summary; host-env and plain values as stored. */
export function readForm(schema: TSchema | undefined, config: Config): Config {
  if (!schema) return config;
  let out = config;
  for (const leaf of sensitiveLeaves(schema, config)) {
    if (isSecretRef(leaf.value)) out = withValueAt(out, leaf.path, secretSummary(leaf.value));
    else if (typeof leaf.value === "string") out = withValueAt(out, leaf.path, LEGACY_SUMMARY);
  }
  return out;
}
