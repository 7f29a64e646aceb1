/**
 * The version a collector reported, the `service.version` attribute of its
 * OpAMP AgentDescription, kept among its reported attributes
 * (collectors.ts report). A fact, not authority: it picks between upstream's
 * old and new component names, never what the collector is sent. The runtime
 * its management mode implies is RUNTIME_OF in shared/vocabulary.ts.
 */

const VERSION_KEY = "service.version";

/** The reported version, or null when the collector never said. */
export function reportedVersion(collector: { reported?: Record<string, string> }): string | null {
  const version = collector.reported?.[VERSION_KEY]?.trim();
  return version ? version.slice(0, 64) : null;
}
