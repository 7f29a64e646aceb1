/**
 * The configuration records as the REST API answers them (/sources,
 * /destinations, /routes, a collector's active sources and destinations),
 * declared once for the server's routes, the OpenAPI document and the UI.
 */
import { Type, type Static } from "@sinclair/typebox";
import { StringMap } from "./schema.ts";
import { RuntimeDifferenceSchema } from "./rollouts.ts";

/** Sensitive fields on a read: never a secret's value. */
const SENSITIVE_READ =
  "A field the catalog marks `sensitive` reads as `{secret: true, set: true, updatedAt}` for a stored secret (never its value; " +
  "send it back unchanged to keep the secret), `{env: NAME}` or `{value, secret: false}`.";
const ComponentConfig = Type.Record(Type.String(), Type.Unknown(), { description: `Settings; the catalog gives the schema per type. ${SENSITIVE_READ}` });
export const OVERRIDES_DESCRIPTION = "Per-collector settings merged over the record's config (objects key by key, null removes a key).";
export const OverridesSchema = Type.Record(Type.String(), Type.Unknown(), { description: `${OVERRIDES_DESCRIPTION} ${SENSITIVE_READ}` });

export const ComponentSchema = Type.Object({ id: Type.String(), name: Type.String(), type: Type.String(), config: ComponentConfig });
export const RouteSchema = Type.Object(
  { id: Type.String(), collectorId: Type.String(), sourceId: Type.String(), pipelineId: Type.String() },
  { title: "Route" },
);
/** A route as created or changed, with the parity warnings of its source on the collector's runtime. */
export const RouteWrittenSchema = Type.Composite(
  [
    RouteSchema,
    Type.Object({
      differences: Type.Array(RuntimeDifferenceSchema, {
        description:
          "Warnings: on an Alloy collector, what the source delivers otherwise than on the OpenTelemetry Collector (OpAMP), which svc cannot normalise (docs/runtime-parity.md).",
      }),
    }),
  ],
  { title: "RouteWritten" },
);

export const SourceActivationSchema = Type.Object({ sourceId: Type.String(), configOverrides: OverridesSchema }, { title: "SourceActivation" });
export const DestinationActivationSchema = Type.Object(
  { destinationId: Type.String(), configOverrides: OverridesSchema, tags: StringMap },
  { title: "DestinationActivation" },
);

export type Component = Static<typeof ComponentSchema>;
export type RouteAnswer = Static<typeof RouteSchema>;
export type SourceActivationAnswer = Static<typeof SourceActivationSchema>;
export type DestinationActivationAnswer = Static<typeof DestinationActivationSchema>;

/** The list answers of these records. */
export const ComponentListSchema = Type.Object({ items: Type.Array(ComponentSchema) });
export const RouteListSchema = Type.Object({ items: Type.Array(RouteSchema) });
export const SourceActivationListSchema = Type.Object({ items: Type.Array(SourceActivationSchema) });
export const DestinationActivationListSchema = Type.Object({ items: Type.Array(DestinationActivationSchema) });
export type ComponentList = Static<typeof ComponentListSchema>;
export type RouteList = Static<typeof RouteListSchema>;
export type SourceActivationList = Static<typeof SourceActivationListSchema>;
export type DestinationActivationList = Static<typeof DestinationActivationListSchema>;
