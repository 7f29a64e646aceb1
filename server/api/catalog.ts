/** REST: the catalog of component types (with their JSON Schemas, for forms) and canned processor templates. */
import { Type } from "@sinclair/typebox";
import { catalogView } from "../catalog/index.ts";
import { route, type Route } from "../http/route.ts";
import { PROCESSOR_TEMPLATES } from "../ottl/templates.ts";

const TypeEntry = Type.Object({
  type: Type.String(),
  title: Type.String(),
  description: Type.String(),
  signals: Type.Array(Type.String()),
  runtimes: Type.Array(Type.String({ enum: ["otelcol", "alloy"] }), { description: "The runtimes that can run it: otelcol for the OpenTelemetry Collector (OpAMP), alloy for Alloy (remote config)." }),
  unavailable: Type.Optional(
    Type.Object({ alloy: Type.Optional(Type.String()) }, { description: "Why a runtime cannot run it, e.g. its only Alloy component is not generally available." }),
  ),
  schema: Type.Unknown({ description: "JSON Schema of the type's config." }),
});

export function catalogRoutes(): Route[] {
  const view = catalogView();
  return [
    route({
      method: "GET",
      path: "/catalog",
      scope: "config:read",
      tag: "catalog",
      summary: "Source, destination and processor types with the JSON Schema of each one's config.",
      response: Type.Object({ sources: Type.Array(TypeEntry), destinations: Type.Array(TypeEntry), processors: Type.Array(TypeEntry) }),
      handler: async () => view,
    }),
    route({
      method: "GET",
      path: "/processor-templates",
      scope: "config:read",
      tag: "catalog",
      summary: "Canned processors, such as the filter that drops health-check logs.",
      response: Type.Object({
        items: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), description: Type.String(), processor: Type.Unknown() })),
      }),
      handler: async () => ({ items: PROCESSOR_TEMPLATES }),
    }),
  ];
}
