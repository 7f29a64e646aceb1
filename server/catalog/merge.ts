/**
 * Per-collector `configOverrides` over a record's `config`, with JSON Merge
 * Patch semantics (RFC 7386): objects merge key by key, `null` removes a
 * key, anything else (lists included) replaces.
 *
 * A sensitive field's value in object form (`{secret}`, `{env}`,
 * `{value, secret: false}`, a read's `{secret: true, …}`) is one value, not
 * an object to merge into: `{env: "TOKEN"}` over `{secret: id}` must become
 * `{env: "TOKEN"}`, not both at once. Every such form has a `secret` or an
 * `env` key, and no catalog object has either, so that is how one is told.
 */

type Json = unknown;

export function mergeConfig(base: Record<string, unknown>, overrides: Record<string, unknown>): Record<string, unknown> {
  return merge(base, overrides) as Record<string, unknown>;
}

function merge(base: Json, patch: Json): Json {
  if (!isMergeable(patch)) return patch;
  const out: Record<string, unknown> = isMergeable(base) ? { ...base } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = merge(out[key], value);
  }
  return out;
}

function isMergeable(value: Json): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && !Object.hasOwn(value, "secret") && !Object.hasOwn(value, "env");
}
