/**
 * Where logs are on this host, for onboarding: the journal, the syslog files, the
 * Docker and Kubernetes container log trees, and the log files of detected services.
 * Container trees are given as the globs a file source takes.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { DetectedService, LogSource } from "../../shared/agent-protocol.ts";

const MAX_SOURCES = 500;
const KIND_ORDER: LogSource["kind"][] = ["journald", "file", "docker", "kubernetes"];

/** A place to look for (under the root) and the source to report when it exists. */
const GENERIC_PLACES: { marker: string; source: LogSource }[] = [
  { marker: "/run/systemd/journal", source: { kind: "journald", path: "journald", service: null } },
  { marker: "/var/log/journal", source: { kind: "journald", path: "journald", service: null } },
  { marker: "/var/log/syslog", source: { kind: "file", path: "/var/log/syslog", service: null } },
  { marker: "/var/log/messages", source: { kind: "file", path: "/var/log/messages", service: null } },
  { marker: "/var/lib/docker/containers", source: { kind: "docker", path: "/var/lib/docker/containers/*/*-json.log", service: null } },
  { marker: "/var/log/pods", source: { kind: "kubernetes", path: "/var/log/pods/*/*/*.log", service: null } },
  { marker: "/var/log/containers", source: { kind: "kubernetes", path: "/var/log/containers/*.log", service: null } },
];

/**
 * One source per place, a path named twice kept once (a service's claim wins over the
 * generic entry, then the service first by name); ordered by kind, then path.
 * `root` prefixes the generic checks (tests use a temp dir); services' logFiles are
 * already real paths.
 */
export async function logSources(services: DetectedService[], root = "/"): Promise<LogSource[]> {
  const generic = GENERIC_PLACES.filter((place) => existsSync(join(root, place.marker))).map((place) => place.source);
  const claimed = [...services]
    .sort((a, b) => a.fingerprint.localeCompare(b.fingerprint))
    .flatMap((service) => service.logFiles.map((path): LogSource => ({ kind: "file", path, service: service.fingerprint })));
  const byPath = new Map<string, LogSource>();
  for (const source of [...claimed, ...generic]) if (!byPath.has(source.path)) byPath.set(source.path, source);
  return [...byPath.values()].sort((a, b) => KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind) || a.path.localeCompare(b.path)).slice(0, MAX_SOURCES);
}
