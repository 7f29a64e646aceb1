/**
 * A collector's attributes, what pipeline matchers read (matchers.ts): reported
 * by the collector (the record's `reported`), set in svc (tags, and
 * `environment`), which win over reported ones on the same key, and the virtual
 * `collector.id`, `collector.name`, `collector.mode`, which win over both.
 * Here, in shared/, because the UI filters live collector events with the same
 * matchers the API applies (collector-filter.ts); server/collectors/attributes.ts
 * re-exports it.
 */
import type { Collector } from "./collectors.ts";

export type AttributeOrigin = "reported" | "set" | "virtual";
export interface CollectorAttribute {
  value: string;
  origin: AttributeOrigin;
}

/** Keys computed from the record, never stored or set: tags by these names are refused. */
export const VIRTUAL_KEYS = ["collector.id", "collector.name", "collector.mode"] as const;

/** Every attribute of a collector with its origin: reported ones, overridden by set ones (tags, environment), and the virtual collector.id, collector.name, collector.mode. */
export function collectorAttributes(collector: Collector): Record<string, CollectorAttribute> {
  const out: Record<string, CollectorAttribute> = {};
  for (const [key, value] of Object.entries(collector.reported ?? {})) out[key] = { value, origin: "reported" };
  for (const [key, value] of Object.entries(collector.tags)) out[key] = { value, origin: "set" };
  if (collector.environment !== null) out.environment = { value: collector.environment, origin: "set" };
  out["collector.id"] = { value: collector.id, origin: "virtual" };
  out["collector.name"] = { value: collector.name, origin: "virtual" };
  out["collector.mode"] = { value: collector.managementMode, origin: "virtual" };
  return out;
}

/** Values per record version, computed once: a list filter reads them for every collector. */
const valuesOf = new WeakMap<Collector, Record<string, string>>();

/** The same, values only: what matchers read. */
export function attributeValues(collector: Collector): Record<string, string> {
  let values = valuesOf.get(collector);
  if (values === undefined) {
    values = { ...collector.reported, ...collector.tags };
    if (collector.environment !== null) values.environment = collector.environment;
    values["collector.id"] = collector.id;
    values["collector.name"] = collector.name;
    values["collector.mode"] = collector.managementMode;
    valuesOf.set(collector, values);
  }
  return values;
}
