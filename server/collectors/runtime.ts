/**
 * The version a collector reported, the `service.version` attribute of its
 * OpAMP AgentDescription, which the OpAMP channel keeps among the collector's
 * tags (opamp/identity.ts, collectorTags). The runtime its management mode
 * implies is RUNTIME_OF in shared/vocabulary.ts.
 */

export const VERSION_TAG = "service.version";

/** The reported version, or null when the collector never said. */
export function reportedVersion(collector: { tags: Record<string, string> }): string | null {
  const version = collector.tags[VERSION_TAG]?.trim();
  return version ? version : null;
}
