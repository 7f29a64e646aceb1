/**
 * Component names shared by both runtimes: `otlp/<name>` in Runtime O and
 * `otelcol.receiver.otlp "<name>"` in Runtime R. A name is lower-case
 * `[a-z0-9_]`, never starts with a digit and is never an Alloy keyword, so it
 * is a valid Alloy label and a valid collector component name at once.
 */
import { isAlloyIdentifier } from "../catalog/alloy-syntax.ts";

/** `"Nginx access-logs"` → `nginx_access_logs`; empty when nothing usable is left. */
export function identifier(text: string): string {
  let name = text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "_")
    .replace(/^_+|_+$/g, "");
  if (name === "") return "";
  if (/^[0-9]/.test(name)) name = `_${name}`;
  return isAlloyIdentifier(name) ? name : `${name}_`;
}

/**
 * Hands out unique names. Callers claim in a stable order (sorted record ids),
 * so the same input always yields the same names; a clash gets `_2`, `_3`, ….
 */
export class NameTable {
  private readonly used = new Set<string>();

  claim(preferred: string, fallback = "component"): string {
    const base = identifier(preferred) || identifier(fallback) || "component";
    let name = base;
    for (let n = 2; this.used.has(name); n += 1) name = `${base}_${n}`;
    this.used.add(name);
    return name;
  }
}
