/** A config on one line, so a list row says what a record (or a collector's overrides) does. */
import type { TSchema } from "@sinclair/typebox";
import { isHostEnvRef, isKeepMarker, isPlainValue, sensitiveLeaves } from "../../../shared/sensitive.ts";
import { sensitiveSummary } from "./secrets.ts";
import { isRecord, type Schema } from "./schema.ts";

/**
 * `key=value` per leaf, nested keys dotted. A value the type's schema marks
 * sensitive is worded by sensitiveSummary() ("(secret)"), never taken apart.
 * Without the schema (not loaded yet, or a type the catalog lacks) a value in
 * one of the read forms of a sensitive field is worded so too, and every
 * other value is shown as it is.
 */
export function configSummary(config: Record<string, unknown>, schema?: Schema): string[] {
  const sensitive = new Set(schema ? sensitiveLeaves(schema as TSchema, config).map((leaf) => leaf.path.join("\u0000")) : []);
  const walk = (value: Record<string, unknown>, path: string[]): string[] =>
    Object.entries(value).flatMap(([key, item]) => {
      const at = [...path, key];
      const name = at.join(".");
      if (sensitive.has(at.join("\u0000")) || (schema === undefined && (isKeepMarker(item) || isHostEnvRef(item) || isPlainValue(item))))
        return [`${name}=${sensitiveSummary(item)}`];
      if (isRecord(item)) return walk(item, at);
      if (Array.isArray(item)) return item.length > 0 ? [`${name}=${item.map((v) => (typeof v === "string" ? v : JSON.stringify(v))).join(", ")}`] : [];
      return item !== undefined && item !== null ? [`${name}=${String(item)}`] : [];
    });
  return walk(config, []);
}
