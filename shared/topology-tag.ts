/**
 * A pipeline graph's tag: a short hash of its content (key order and absent
 * fields do not count). An editor sends the tag of the graph it started from
 * with its save, and the save is refused when the stored graph has another,
 * so nobody silently overwrites someone else's change. Pure and synchronous,
 * so the web UI computes the very same tag from the graph the API sent it.
 */
import type { Topology } from "./config-records.ts";

export function topologyTag(topology: Topology): string {
  return hash(canonical(topology));
}

/** JSON with object keys sorted and undefined members left out. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const members = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`);
    return `{${members.join(",")}}`;
  }
  return JSON.stringify(value);
}

/** cyrb53: two 32-bit FNV-style lanes, 53 bits in all; a change detector, not a security measure. */
function hash(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36);
}
