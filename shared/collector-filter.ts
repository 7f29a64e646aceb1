/**
 * The collector list's filter as a predicate. Its own module, without TypeBox
 * at run time, because the UI applies the very same predicate to live
 * collector events that the API applies to its pages.
 */
import { isConfigReason, reportingOnly, type AttentionReason } from "./attention.ts";
import { attributeValues, type TrustedKeys } from "./collector-attributes.ts";
import type { CollectorStatus } from "./collector-status.ts";
import type { Collector } from "./collectors.ts";
import { matches, type Matcher } from "./matchers.ts";
import type { ManagementMode } from "./vocabulary.ts";

export interface CollectorFilter {
  /** Each `key:value` must match a tag exactly; a bare `key` only needs the tag to exist. */
  tags?: string[];
  status?: CollectorStatus;
  environment?: string;
  managementMode?: ManagementMode;
  /** Case-insensitive substring of name, id or environment. */
  q?: string;
  /** Alertmanager matchers over the collector's attributes (collector-attributes.ts); all must hold. */
  match?: readonly Matcher[];
  /** Why it needs attention (attention.ts): offline and reportingOnly are read off the record; a config reason is membership of `attending`. */
  attention?: AttentionReason;
  /** With a config reason in `attention`: the ids that reason holds for now (the server's config state, e.g. Attention.attentionIds). */
  attending?: ReadonlySet<string>;
  /** Reported keys `match` may read (collector-attributes.ts); absent: none, matchers read set and virtual attributes only. */
  trusted?: TrustedKeys;
}

const NONE: TrustedKeys = new Set();

/** Lower-cased text that `q` searches, computed once per record version. */
const searchText = new WeakMap<Collector, string>();

function textOf(collector: Collector): string {
  let text = searchText.get(collector);
  if (text === undefined) {
    text = [collector.name, collector.id, collector.environment ?? ""].join("\n").toLowerCase();
    searchText.set(collector, text);
  }
  return text;
}

/** One `tags` entry: the tag `key` must exist, and equal `value` when one is given. */
export interface TagFilter {
  key: string;
  value: string | undefined;
}

/** `tags` as compileFilter reads them: `key:value` splits at the first colon, a bare `key` has no value. */
export function tagFilters(tags: readonly string[] = []): TagFilter[] {
  return tags.map((tag) => {
    const colon = tag.indexOf(":");
    return colon === -1 ? { key: tag, value: undefined } : { key: tag.slice(0, colon), value: tag.slice(colon + 1) };
  });
}

/** Turns a filter into a predicate, parsing tags and lower-casing text once rather than per record. */
export function compileFilter(filter: CollectorFilter): (collector: Collector) => boolean {
  const tags = tagFilters(filter.tags);
  const trusted = filter.trusted ?? NONE;
  const needle = filter.q === undefined || filter.q === "" ? undefined : filter.q.toLowerCase();
  const attention = filter.attention;
  const attending = filter.attending ?? new Set<string>();
  return (collector) => {
    if (attention !== undefined) {
      if (isConfigReason(attention) ? !attending.has(collector.id) : attention === "offline" ? collector.status !== "offline" : !reportingOnly(collector))
        return false;
    }
    if (filter.status !== undefined && collector.status !== filter.status) return false;
    if (filter.environment !== undefined && collector.environment !== filter.environment) return false;
    if (filter.managementMode !== undefined && collector.managementMode !== filter.managementMode) return false;
    for (const { key, value } of tags) {
      const actual = collector.tags[key];
      if (actual === undefined || (value !== undefined && actual !== value)) return false;
    }
    if (needle !== undefined && !textOf(collector).includes(needle)) return false;
    return filter.match === undefined || filter.match.length === 0 || matches(filter.match, attributeValues(collector, trusted));
  };
}
