/**
 * A catalog type's folder as the catalog takes it: the type, the upstream
 * facts its renderers rest on (`upstream.ts`), and the configs its
 * conformance test renders (`corpus.ts`). Each folder's `index.ts` registers
 * itself when registry.ts imports it, so adding a type is its folder and one
 * import line there; the registry, the upstream tables, the corpus, the
 * parity table and the conformance tests all read the registered folders.
 */
import type { Signal } from "../../shared/config-records.ts";
import type { DestinationType, ProcessorType, SourceType } from "./types.ts";
import type { TypeUpstream } from "./upstream/types.ts";

/** A `config` as stored (before defaults are filled in). */
export type CorpusConfig = Readonly<Record<string, unknown>>;

export interface SourceFolder {
  type: SourceType;
  upstream: TypeUpstream;
  /** Its configs, each rendered into every destination through every processor. */
  corpus: readonly CorpusConfig[];
}

export interface DestinationFolder {
  type: DestinationType;
  upstream: TypeUpstream;
  corpus: readonly CorpusConfig[];
}

export interface ProcessorFolder {
  type: ProcessorType;
  upstream: TypeUpstream;
  /** Its configs per signal: conditions and statements are written for one signal's records. */
  corpus: Readonly<Record<Signal, readonly CorpusConfig[]>>;
}

export type CatalogFolder = SourceFolder | DestinationFolder | ProcessorFolder;

const folders: CatalogFolder[] = [];

/** Adds a folder to the catalog, after those imported before it (registry.ts's order is the catalog's). */
export function registerFolder(folder: CatalogFolder): void {
  const { kind, type } = folder.type;
  if (folders.some((f) => f.type.kind === kind && f.type.type === type)) throw new Error(`The catalog has two ${kind} types '${type}'.`);
  if (Object.values(folder.corpus).flat().length === 0) throw new Error(`The ${kind} type '${type}' has no corpus to check its renders with.`);
  folders.push(folder);
}

/** The folders registered so far, in registration order. */
export function registeredFolders(): readonly CatalogFolder[] {
  return folders;
}
