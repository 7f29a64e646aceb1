/**
 * Why a collector needs attention: the dashboard's "Needs attention" counts
 * and the collector list's `attention` filter use these words, so a count and
 * the list it links to select the same collectors. Two are read off the
 * collector record (offline, reportingOnly); the others off its config target
 * and render failure, which only the server holds (server/rollout/attention.ts).
 */
import type { Collector } from "./collectors.ts";

export const ATTENTION_REASONS = ["failed", "offline", "unrenderable", "pinned", "drifted", "reportingOnly"] as const;
export type AttentionReason = (typeof ATTENTION_REASONS)[number];

/** The reasons judged from a collector's config state, not from its record. */
export const CONFIG_REASONS = ["failed", "unrenderable", "pinned", "drifted"] as const satisfies readonly AttentionReason[];
export type ConfigReason = (typeof CONFIG_REASONS)[number];

export const isConfigReason = (reason: string): reason is ConfigReason => (CONFIG_REASONS as readonly string[]).includes(reason);

/** Connected without the means to take remote config (as a rollout counts it). */
export const reportingOnly = (c: Collector): boolean => c.health?.acceptsRemoteConfig === false && (c.status === "online" || c.status === "degraded");

/** The reasons read off the record alone. */
export function recordReasons(c: Collector): AttentionReason[] {
  const out: AttentionReason[] = [];
  if (c.status === "offline") out.push("offline");
  if (reportingOnly(c)) out.push("reportingOnly");
  return out;
}
