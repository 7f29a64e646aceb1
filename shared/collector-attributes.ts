/**
 * A collector's attributes and which of them may target it (docs/architecture.md
 * "Trust model"). Set in svc (tags, and `environment`) and the virtual
 * `collector.id`, `collector.name`, `collector.mode` are svc's own; reported
 * ones (the record's `reported`: OpAMP AgentDescription, Alloy remotecfg
 * attributes) are what the collector says about itself, facts shown with their
 * origin. Matchers read set and virtual attributes, and a reported key only
 * when an admin trusts it (`trusted`); attribute references (`{{attr "KEY"}}`)
 * read every value: a value is not authority. Set ones win over reported ones
 * on the same key, virtual ones over both.
 * Here, in shared/, because the UI filters live collector events with the same
 * matchers the API applies (collector-filter.ts); server/collectors/attributes.ts
 * re-exports it.
 */
import type { Collector } from "./collectors.ts";

export type AttributeOrigin = "reported" | "set" | "virtual";
export interface CollectorAttribute {
  value: string;
  origin: AttributeOrigin;
  /** Whether matchers read it: set and virtual ones always, a reported one only when its key is trusted. */
  targets: boolean;
}

/** Reported keys an admin trusts to target collectors (fleet.trustedAttributes and the System page's list). */
export type TrustedKeys = ReadonlySet<string>;

/** Keys computed from the record, never stored or set: tags by these names are refused. */
export const VIRTUAL_KEYS = ["collector.id", "collector.name", "collector.mode"] as const;

/** Longest reported key kept (server/collectors/attributes.ts boundReported), so the longest one worth trusting. */
export const MAX_REPORTED_KEY_LENGTH = 128;
/** Most trusted keys in each list (a collector reports at most 64 keys). */
export const MAX_TRUSTED_KEYS = 64;

/** Whether a matcher on `key` reads svc's own attributes only (virtual or `environment`); any other key may also be a tag. */
export function isOwnKey(key: string): boolean {
  return key === "environment" || (VIRTUAL_KEYS as readonly string[]).includes(key);
}

/** Why `key` cannot be trusted (fleet.trustedAttributes, the System page's list), or undefined when it can. */
export function trustedKeyProblem(key: string): string | undefined {
  if (key.length === 0 || key.length > MAX_REPORTED_KEY_LENGTH) return `must be 1 to ${MAX_REPORTED_KEY_LENGTH} characters`;
  if (isOwnKey(key)) return `"${key}" is svc's own attribute, never a reported one: matchers always read it`;
  return undefined;
}

/** Every attribute of a collector with its origin and whether it targets: reported ones, overridden by set ones (tags, environment), and the virtual ones. */
export function collectorAttributes(collector: Collector, trusted: TrustedKeys): Record<string, CollectorAttribute> {
  const out: Record<string, CollectorAttribute> = {};
  for (const [key, value] of Object.entries(collector.reported ?? {})) out[key] = { value, origin: "reported", targets: trusted.has(key) };
  for (const [key, value] of Object.entries(collector.tags)) out[key] = { value, origin: "set", targets: true };
  if (collector.environment !== null) out.environment = { value: collector.environment, origin: "set", targets: true };
  out["collector.id"] = { value: collector.id, origin: "virtual", targets: true };
  out["collector.name"] = { value: collector.name, origin: "virtual", targets: true };
  out["collector.mode"] = { value: collector.managementMode, origin: "virtual", targets: true };
  return out;
}

/** What matchers read, per record version and trusted set (replaced whole on a change), computed once: a list filter reads them for every collector. */
const valuesOf = new WeakMap<Collector, { trusted: TrustedKeys; values: Record<string, string> }>();

/** The values matchers read: trusted reported ones, overridden by set ones, and the virtual ones. */
export function attributeValues(collector: Collector, trusted: TrustedKeys): Record<string, string> {
  const cached = valuesOf.get(collector);
  if (cached !== undefined && cached.trusted === trusted) return cached.values;
  const values: Record<string, string> = {};
  if (trusted.size > 0) {
    for (const [key, value] of Object.entries(collector.reported ?? {})) if (trusted.has(key)) values[key] = value;
  }
  withOwn(values, collector);
  valuesOf.set(collector, { trusted, values });
  return values;
}

/** The values matchers read, in two layers: svc's own (set and virtual), and the reported ones no own value overrides. */
export interface AttributeLayers {
  own: Record<string, string>;
  reported: Record<string, string>;
}

/**
 * attributeValues before trust is applied (server/collectors/attribute-index.ts indexes both layers, and applies
 * trust at query time): what attributeValues reads for key k is `own[k]`, else `reported[k]` when k is trusted.
 * Built by the same assignments, so a key they drop (`__proto__`) is dropped here too.
 */
export function attributeLayers(collector: Collector): AttributeLayers {
  const own = withOwn({}, collector);
  const reported: Record<string, string> = {};
  for (const [key, value] of Object.entries(collector.reported ?? {})) if (!Object.hasOwn(own, key)) reported[key] = value;
  return { own, reported };
}

const referencesOf = new WeakMap<Collector, Record<string, string>>();

/** Every value, reported ones included, what attribute references (`{{attr "KEY"}}`) fill in; computed once per record version. */
export function referenceValues(collector: Collector): Record<string, string> {
  let values = referencesOf.get(collector);
  if (values === undefined) {
    values = withOwn({ ...collector.reported }, collector);
    referencesOf.set(collector, values);
  }
  return values;
}

function withOwn(values: Record<string, string>, collector: Collector): Record<string, string> {
  Object.assign(values, collector.tags);
  if (collector.environment !== null) values.environment = collector.environment;
  values["collector.id"] = collector.id;
  values["collector.name"] = collector.name;
  values["collector.mode"] = collector.managementMode;
  return values;
}
