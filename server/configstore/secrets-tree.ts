/**
 * Values in sensitive fields of a config tree: in source and destination
 * records and in collectors' `configOverrides`. Plaintext there is from
 * before secrets were kept apart: the server's upgrade seals it in the
 * working tree, `history purge-secrets` in every commit, and the purge reads
 * the working tree's references to reuse their ids.
 */
import { parse } from "yaml";
import { findType } from "../catalog/registry.ts";
import { DIRS, toYaml } from "./layout.ts";
import type { CollectorActivations, DestinationRecord, SourceRecord } from "../../shared/config-records.ts";
import { sensitiveLeaves, withValueAt, type SecretRef } from "../../shared/sensitive.ts";

/** One sensitive place a tree's file fills. */
export interface TreeLeaf {
  /** The file's path in the tree. */
  file: string;
  /** Keys from the parsed file's root, e.g. `["config", "headers", "Authorization"]` or `["destinations", "0", "configOverrides", …]`. */
  path: string[];
  value: unknown;
}

/** Seals one plaintext found at `where` and returns the id of its version (callers may return one id for an equal value). */
export type SealPlaintext = (plaintext: string, where: TreeLeaf) => string;

type Kind = "source" | "destination";

function recordKind(file: string): Kind | null {
  return file.startsWith(DIRS.sources) ? "source" : file.startsWith(DIRS.destinations) ? "destination" : null;
}

/**
 * Every sensitive place the files of `files` (path → text) fill, in file
 * order. An override is walked with the schema of the record it overrides,
 * which must be among `files`.
 */
export function sensitiveValuesInTree(files: ReadonlyMap<string, string>): TreeLeaf[] {
  const records = new Map<string, { kind: Kind; record: SourceRecord | DestinationRecord }>();
  const typeOf = new Map<string, string>();
  for (const [file, text] of files) {
    const kind = recordKind(file);
    if (kind === null) continue;
    const record = parse(text) as SourceRecord | DestinationRecord;
    records.set(file, { kind, record });
    typeOf.set(`${kind}/${record.id}`, record.type);
  }
  const leaves = (file: string, root: string[], kind: Kind, type: string | undefined, config: unknown): TreeLeaf[] => {
    const schema = type === undefined ? undefined : findType(kind, type)?.schema;
    if (!schema) return [];
    return sensitiveLeaves(schema, config ?? {}).map((leaf) => ({ file, path: [...root, ...leaf.path], value: leaf.value }));
  };

  const out: TreeLeaf[] = [];
  for (const [file, text] of files) {
    const found = records.get(file);
    if (found) {
      out.push(...leaves(file, ["config"], found.kind, found.record.type, found.record.config));
    } else if (file.startsWith(DIRS.collectors) && file.endsWith("/activations.yaml")) {
      const activations = parse(text) as CollectorActivations;
      (activations.sources ?? []).forEach((a, i) =>
        out.push(...leaves(file, ["sources", String(i), "configOverrides"], "source", typeOf.get(`source/${a.sourceId}`), a.configOverrides)),
      );
      (activations.destinations ?? []).forEach((a, i) =>
        out.push(
          ...leaves(file, ["destinations", String(i), "configOverrides"], "destination", typeOf.get(`destination/${a.destinationId}`), a.configOverrides),
        ),
      );
    }
  }
  return out;
}

/**
 * The files of `files` (path → text) whose sensitive fields hold plaintext,
 * rewritten with `{secret: <id>}` in their place: path → new text. Files
 * without plaintext are left out.
 */
export function sealPlaintextInTree(files: ReadonlyMap<string, string>, seal: SealPlaintext): Map<string, string> {
  const rewritten = new Map<string, unknown>();
  for (const leaf of sensitiveValuesInTree(files)) {
    if (typeof leaf.value !== "string") continue;
    const doc = rewritten.has(leaf.file) ? rewritten.get(leaf.file) : parse(files.get(leaf.file)!);
    rewritten.set(leaf.file, withValueAt(doc, leaf.path, { secret: seal(leaf.value, leaf) } satisfies SecretRef));
  }
  return new Map([...rewritten].map(([file, doc]) => [file, toYaml(doc)]));
}
