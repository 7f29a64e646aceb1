/**
 * The catalog of component types as the REST API answers it (GET /catalog):
 * the JSON Schema of each type's config, from which the UI builds its forms.
 * The server's catalog (server/catalog/) builds it. Some fields are typed
 * more narrowly than the document says (Type.Unsafe keeps the schema as it
 * was, so the OpenAPI document does not change).
 */
import { Type, type Static } from "@sinclair/typebox";
import type { ProcessorSpec, Signal } from "./config-records.ts";
import type { Runtime } from "./vocabulary.ts";

/** JSON Schema as plain data. */
export type JsonSchema = { [key: string]: unknown };

export const CatalogEntrySchema = Type.Object({
  type: Type.String(),
  title: Type.String(),
  description: Type.String(),
  signals: Type.Unsafe<Signal[]>(Type.Array(Type.String())),
  /** The runtimes that can run it; `unavailable` says why one cannot. */
  runtimes: Type.Unsafe<Runtime[]>(
    Type.Array(Type.String({ enum: ["otelcol", "alloy"] }), {
      description: "The runtimes that can run it: otelcol for the OpenTelemetry Collector (OpAMP), alloy for Alloy (remote config).",
    }),
  ),
  unavailable: Type.Optional(
    Type.Unsafe<Partial<Record<Runtime, string>>>(
      Type.Object(
        { alloy: Type.Optional(Type.String()) },
        { description: "Why a runtime cannot run it, e.g. its only Alloy component is not generally available." },
      ),
    ),
  ),
  schema: Type.Unsafe<JsonSchema>(Type.Unknown({ description: "JSON Schema of the type's config." })),
});
export type CatalogEntry = Static<typeof CatalogEntrySchema>;

export const CatalogViewSchema = Type.Object({
  sources: Type.Array(CatalogEntrySchema),
  destinations: Type.Array(CatalogEntrySchema),
  processors: Type.Array(CatalogEntrySchema),
});
export type CatalogView = Static<typeof CatalogViewSchema>;

/** Canned processors (GET /processor-templates). */
export const ProcessorTemplatesSchema = Type.Object({
  items: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), description: Type.String(), processor: Type.Unsafe<ProcessorSpec>(Type.Unknown()) })),
});
export type ProcessorTemplates = Static<typeof ProcessorTemplatesSchema>;
