/**
 * Plaintext in sensitive fields of a config tree, from before secrets were
 * kept apart: finds it in source and destination records and in collectors'
 * `configOverrides`, and rewrites those files with each value sealed. The
 * server's upgrade does this to the working tree; `history purge-secrets`
 * does it to every commit.
 */
import { parse } from "yaml";
import { findType } from "../catalog/registry.ts";
import { DIRS, toYaml } from "../configstore/layout.ts";
import type { CollectorActivations, DestinationRecord, SourceRecord } from "../configstore/records.ts";
import { sensitiveLeaves, withValueAt, type SecretRef } from "./values.ts";

/** Seals one plaintext and returns the id of its version (callers may return one id for an equal value). */
export type SealPlaintext = (plaintext: string) => string;

/**
 * The files of `files` (path → text) whose sensitive fields hold plaintext,
 * rewritten with `{secret: <id>}` in their place: path → new text. Files
 * without plaintext are left out.
 */
export function sealPlaintextInTree(files: ReadonlyMap<string, string>, seal: SealPlaintext): Map<string, string> {
  const typeOf = new Map<string, { kind: "source" | "destination"; type: string }>();
  for (const [path, text] of files) {
    const kind = path.startsWith(DIRS.sources) ? "source" : path.startsWith(DIRS.destinations) ? "destination" : null;
    if (kind === null) continue;
    const record = parse(text) as SourceRecord | DestinationRecord;
    typeOf.set(`${kind}/${record.id}`, { kind, type: record.type });
  }
  const sealed = (kind: "source" | "destination", type: string, config: Record<string, unknown>): Record<string, unknown> | null => {
    const schema = findType(kind, type)?.schema;
    if (!schema) return null;
    let next = config;
    for (const leaf of sensitiveLeaves(schema, config)) {
      if (typeof leaf.value === "string") next = withValueAt(next, leaf.path, { secret: seal(leaf.value) } satisfies SecretRef);
    }
    return next === config ? null : next;
  };

  const out = new Map<string, string>();
  for (const [path, text] of files) {
    if (path.startsWith(DIRS.sources) || path.startsWith(DIRS.destinations)) {
      const record = parse(text) as SourceRecord | DestinationRecord;
      const config = sealed(path.startsWith(DIRS.sources) ? "source" : "destination", record.type, record.config ?? {});
      if (config) out.set(path, toYaml({ ...record, config }));
    } else if (path.startsWith(DIRS.collectors) && path.endsWith("/activations.yaml")) {
      const activations = parse(text) as CollectorActivations;
      let changed = false;
      const overrides = <T extends { configOverrides: Record<string, unknown> }>(list: T[], kind: "source" | "destination", idOf: (a: T) => string): T[] =>
        list.map((activation) => {
          const type = typeOf.get(`${kind}/${idOf(activation)}`)?.type;
          const config = type === undefined ? null : sealed(kind, type, activation.configOverrides ?? {});
          if (!config) return activation;
          changed = true;
          return { ...activation, configOverrides: config };
        });
      const next: CollectorActivations = {
        ...activations,
        sources: overrides(activations.sources ?? [], "source", (a) => a.sourceId),
        destinations: overrides(activations.destinations ?? [], "destination", (a) => a.destinationId),
      };
      if (changed) out.set(path, toYaml(next));
    }
  }
  return out;
}
