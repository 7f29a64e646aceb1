/**
 * A collector's attributes: reported by the collector itself (OpAMP
 * AgentDescription identifying and non-identifying attributes; Alloy remotecfg
 * `attributes`/`local_attributes`), kept on the record as `reported`; set in
 * svc (tags, and `environment`), which win over reported ones on the same key;
 * and the virtual `collector.id`, `collector.name`, `collector.mode`, which win
 * over both. Matchers read a reported key only when it is trusted (./trust.ts).
 * The reading side lives in shared/collector-attributes.ts (the UI filters with
 * it too); this module adds the bounds on what a collector may report.
 */
import { MAX_REPORTED_KEY_LENGTH, VIRTUAL_KEYS } from "../../shared/collector-attributes.ts";

export {
  attributeLayers,
  attributeValues,
  collectorAttributes,
  referenceValues,
  isOwnKey,
  MAX_REPORTED_KEY_LENGTH,
  MAX_TRUSTED_KEYS,
  trustedKeyProblem,
  VIRTUAL_KEYS,
  type TrustedKeys,
  type AttributeLayers,
  type AttributeOrigin,
  type CollectorAttribute,
} from "../../shared/collector-attributes.ts";

/** Bounds on what one collector may report: the rest is dropped (keys in sorted order are kept). */
export const MAX_REPORTED_KEYS = 64;
export const MAX_REPORTED_VALUE_LENGTH = 256;
/** Characters of keys and values together; the fleet target is 15 KiB of server memory per collector. */
export const MAX_REPORTED_CHARS = 4096;

/**
 * What a collector reported, bounded: at most MAX_REPORTED_KEYS keys and
 * MAX_REPORTED_CHARS characters of keys and values (the first in sorted
 * order, so the same report always keeps the same ones), keys longer than
 * MAX_REPORTED_KEY_LENGTH and virtual keys dropped, values cut to
 * MAX_REPORTED_VALUE_LENGTH. Sorted, so equal reports compare equal.
 */
export function boundReported(input: Iterable<[string, string]>): Record<string, string> {
  const entries = [...input].filter(([key]) => key.length > 0 && key.length <= MAX_REPORTED_KEY_LENGTH && !(VIRTUAL_KEYS as readonly string[]).includes(key));
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const out: Record<string, string> = {};
  let count = 0;
  let chars = 0;
  for (const [key, full] of entries) {
    if (key in out) continue;
    const value = full.length > MAX_REPORTED_VALUE_LENGTH ? full.slice(0, MAX_REPORTED_VALUE_LENGTH) : full;
    if (count === MAX_REPORTED_KEYS || chars + key.length + value.length > MAX_REPORTED_CHARS) break;
    out[key] = value;
    count++;
    chars += key.length + value.length;
  }
  return out;
}

/** Whether two reported maps hold the same keys and values. */
export function sameReported(a: Readonly<Record<string, string>> | undefined, b: Readonly<Record<string, string>>): boolean {
  const aKeys = Object.keys(a ?? {});
  if (aKeys.length !== Object.keys(b).length) return false;
  for (const key of aKeys) if (a![key] !== b[key]) return false;
  return true;
}
