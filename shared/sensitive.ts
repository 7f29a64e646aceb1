/**
 * Sensitive fields: the catalog marks the schema of every field that carries
 * a credential, and a value in such a field takes one of a few forms, never
 * the plaintext once stored.
 *
 * | where                | forms                                                                            |
 * |----------------------|----------------------------------------------------------------------------------|
 * | git tree (stored)    | `{secret: "<id>"}` · `{env: "NAME"}` · `{value: "text", secret: false}`          |
 * | API write            | `"plaintext"` (set) · `{secret: true, …}` (keep the stored one) · `{env}` · `{value, secret: false}` |
 * | API read             | `{secret: true, set: true, updatedAt}` · `{env}` · `{value, secret: false}`      |
 * | rendered, redacted   | the marker `<secret:<id>>` (server/secrets/values.ts) · the runtime's host-env reference · the text |
 *
 * `<id>` names one sealed version in the vault (server/secrets/vault.ts): a new value gets a
 * new id, so the tree's diff says "secret changed" without saying what to.
 * `{value, secret: false}` is allowed only where the schema says so (header
 * values: sensitive by default, a header such as `X-Scope-OrgID` may be
 * marked as not secret). `{env}` takes the value from the collector host's
 * environment when the collector loads its config.
 */
import type { TSchema } from "@sinclair/typebox";

/** Schema keyword: the field carries a credential. */
export const SENSITIVE = "sensitive";
/** Schema keyword: the operator may mark a value of this field as not secret (`{value, secret: false}`). */
export const PLAIN_ALLOWED = "plainAllowed";

/** Marks `schema` as a field that carries a credential; `plainAllowed` lets a value be marked as not secret. */
export function Sensitive<T extends TSchema>(schema: T, options: { plainAllowed?: boolean } = {}): T {
  return { ...schema, [SENSITIVE]: true, ...(options.plainAllowed ? { [PLAIN_ALLOWED]: true } : {}) };
}

export function isSensitive(schema: TSchema): boolean {
  return (schema as Record<string, unknown>)[SENSITIVE] === true;
}

export function plainAllowed(schema: TSchema): boolean {
  return (schema as Record<string, unknown>)[PLAIN_ALLOWED] === true;
}

/** A stored secret: the id of its sealed version in the vault. */
export interface SecretRef {
  secret: string;
}

/** A value the collector reads from its host's environment. */
export interface HostEnvRef {
  env: string;
}

/** A value in a sensitive field that the operator marked as not secret. */
export interface PlainValue {
  value: string;
  secret: false;
}

/** What a read shows in place of a stored secret; sent back on a write, it keeps the stored one. */
export interface SecretSummary {
  secret: true;
  set: true;
  updatedAt: string;
}

/** A sealed version's id: a UUIDv7, so the time it was set is part of it. */
const SECRET_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/**
 * An environment variable name as the collector's env provider accepts it
 * (opentelemetry-collector confmap/provider/envprovider: `^[a-zA-Z_][a-zA-Z0-9_]*$`);
 * Alloy's `sys.env` takes any name, so the stricter rule serves both.
 */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function record(value: unknown): Record<string, unknown> | null {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
}

function keysAre(value: Record<string, unknown>, ...keys: string[]): boolean {
  const own = Object.keys(value);
  return own.length === keys.length && keys.every((k) => own.includes(k));
}

export function isSecretId(value: unknown): value is string {
  return typeof value === "string" && SECRET_ID.test(value);
}

export function isSecretRef(value: unknown): value is SecretRef {
  const r = record(value);
  return r !== null && keysAre(r, "secret") && isSecretId(r.secret);
}

export function isHostEnvRef(value: unknown): value is HostEnvRef {
  const r = record(value);
  return r !== null && keysAre(r, "env") && typeof r.env === "string";
}

export function isPlainValue(value: unknown): value is PlainValue {
  const r = record(value);
  return r !== null && keysAre(r, "value", "secret") && typeof r.value === "string" && r.secret === false;
}

/** `{secret: true, …}` as a read returns it: on a write, "keep what is stored here". */
export function isKeepMarker(value: unknown): boolean {
  const r = record(value);
  return r !== null && r.secret === true && !("value" in r) && !("env" in r);
}

/** One place in a config that the schema marks sensitive and the config fills. */
export interface SensitiveLeaf {
  /** Keys from the config's root, e.g. `["headers", "Authorization"]`. */
  path: string[];
  value: unknown;
  schema: TSchema;
}

/**
 * Every sensitive place `value` fills, walking `schema` beside it: object
 * properties, record entries (`patternProperties`) and array items. Places
 * the value leaves out are not visited; a partial value (a collector's
 * `configOverrides`) walks the same way.
 */
export function sensitiveLeaves(schema: TSchema, value: unknown, path: string[] = []): SensitiveLeaf[] {
  if (isSensitive(schema)) return value === undefined ? [] : [{ path, value, schema }];
  const s = schema as Record<string, unknown> & TSchema;
  const object = record(value);
  if (object !== null) {
    const leaves: SensitiveLeaf[] = [];
    const properties = record(s.properties) as Record<string, TSchema> | null;
    const patterns = record(s.patternProperties) as Record<string, TSchema> | null;
    for (const [key, item] of Object.entries(object)) {
      const child = properties?.[key] ?? (patterns ? matchingPattern(patterns, key) : undefined);
      if (child) leaves.push(...sensitiveLeaves(child, item, [...path, key]));
    }
    return leaves;
  }
  if (Array.isArray(value) && s.items && !Array.isArray(s.items)) {
    return value.flatMap((item, i) => sensitiveLeaves(s.items as TSchema, item, [...path, String(i)]));
  }
  // Unions are not walked: no catalog field puts a sensitive value in one.
  return [];
}

function matchingPattern(patterns: Record<string, TSchema>, key: string): TSchema | undefined {
  for (const [pattern, schema] of Object.entries(patterns)) if (new RegExp(pattern, "u").test(key)) return schema;
  return undefined;
}

/** Whether the schema marks any field sensitive (a type without one needs no secret handling). */
export function hasSensitive(schema: TSchema): boolean {
  if (isSensitive(schema)) return true;
  const s = schema as Record<string, unknown>;
  const children = [
    ...Object.values(record(s.properties) ?? {}),
    ...Object.values(record(s.patternProperties) ?? {}),
    ...(s.items && !Array.isArray(s.items) ? [s.items] : []),
  ] as TSchema[];
  return children.some(hasSensitive);
}

/** The value at `path` under `root`, or undefined. */
export function valueAt(root: unknown, path: readonly string[]): unknown {
  let at: unknown = root;
  for (const key of path) {
    const r = record(at);
    if (Array.isArray(at)) at = at[Number(key)];
    else if (r !== null) at = Object.hasOwn(r, key) ? r[key] : undefined;
    else return undefined;
  }
  return at;
}

/** A copy of `root` with the value at `path` replaced (every container on the way copied, the rest shared). */
export function withValueAt<T>(root: T, path: readonly string[], value: unknown): T {
  if (path.length === 0) return value as T;
  const [key, ...rest] = path as [string, ...string[]];
  if (Array.isArray(root)) {
    const copy = [...root];
    copy[Number(key)] = withValueAt(copy[Number(key)], rest, value);
    return copy as T;
  }
  const r = record(root) ?? {};
  return { ...r, [key]: withValueAt(r[key], rest, value) } as T;
}

/** A key path as error details spell it, e.g. `config.headers.Authorization`. */
export function pathText(root: string, path: readonly string[]): string {
  return [root, ...path].filter((p) => p !== "").join(".");
}
