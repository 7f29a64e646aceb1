/**
 * The catalog of component types as the REST API answers it (GET /catalog):
 * the JSON Schema of each type's config, from which the UI builds its forms.
 * Types only; the server's catalog (server/catalog/) builds it.
 */
import type { Signal } from "./config-records.ts";
import type { Runtime } from "./vocabulary.ts";

/** JSON Schema as plain data. */
export type JsonSchema = { [key: string]: unknown };

export interface CatalogEntry {
  type: string;
  title: string;
  description: string;
  signals: Signal[];
  /** The runtimes that can run it; `unavailable` says why one cannot. */
  runtimes: Runtime[];
  unavailable?: Partial<Record<Runtime, string>>;
  schema: JsonSchema;
}

export interface CatalogView {
  sources: CatalogEntry[];
  destinations: CatalogEntry[];
  processors: CatalogEntry[];
}
