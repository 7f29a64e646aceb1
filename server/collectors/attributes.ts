/**
 * A collector's attributes, what pipeline matchers (shared/matchers.ts) read:
 * set in svc (tags, and `environment` when it has one) and the virtual
 * `collector.id`, `collector.name`, `collector.mode`. First version, from
 * what the record holds today; reported attributes join here (set wins over
 * reported on the same key; the virtual ones are always the record's own).
 */
import type { Collector } from "../../shared/collectors.ts";

export type AttributeOrigin = "reported" | "set" | "virtual";
export interface CollectorAttribute {
  value: string;
  origin: AttributeOrigin;
}

/** Every attribute of a collector with its origin: reported ones, overridden by set ones (tags, environment), and the virtual collector.id, collector.name, collector.mode. */
export function collectorAttributes(collector: Collector): Record<string, CollectorAttribute> {
  const out: Record<string, CollectorAttribute> = {};
  for (const [key, value] of Object.entries(collector.tags)) out[key] = { value, origin: "set" };
  if (collector.environment !== null && collector.environment !== "") out.environment = { value: collector.environment, origin: "set" };
  out["collector.id"] = { value: collector.id, origin: "virtual" };
  out["collector.name"] = { value: collector.name, origin: "virtual" };
  out["collector.mode"] = { value: collector.managementMode, origin: "virtual" };
  return out;
}

/** The same, values only: what matchers read. */
export function attributeValues(collector: Collector): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, attribute] of Object.entries(collectorAttributes(collector))) out[key] = attribute.value;
  return out;
}
