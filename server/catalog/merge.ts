/**
 * Per-collector `configOverrides` over a record's `config`, with JSON Merge
 * Patch semantics (RFC 7386): objects merge key by key, `null` removes a
 * key, anything else (lists included) replaces.
 */

type Json = unknown;

export function mergeConfig(base: Record<string, unknown>, overrides: Record<string, unknown>): Record<string, unknown> {
  return merge(base, overrides) as Record<string, unknown>;
}

function merge(base: Json, patch: Json): Json {
  if (!isObject(patch)) return patch;
  const out: Record<string, unknown> = isObject(base) ? { ...base } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete out[key];
    else out[key] = merge(out[key], value);
  }
  return out;
}

function isObject(value: Json): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
