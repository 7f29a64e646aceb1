/** REST: the catalog of component types (with their JSON Schemas, for forms) and canned processor templates. */
import { CatalogViewSchema, ProcessorTemplatesSchema } from "../../shared/catalog.ts";
import { catalogView } from "../catalog/index.ts";
import { route, type Route } from "../http/route.ts";
import { PROCESSOR_TEMPLATES } from "../ottl/templates.ts";

export function catalogRoutes(): Route[] {
  const view = catalogView();
  return [
    route({
      method: "GET",
      path: "/catalog",
      scope: "config:read",
      tag: "catalog",
      summary: "Source, destination and processor types with the JSON Schema of each one's config.",
      response: CatalogViewSchema,
      handler: async () => view,
    }),
    route({
      method: "GET",
      path: "/processor-templates",
      scope: "config:read",
      tag: "catalog",
      summary: "Canned processors, such as the filter that drops health-check logs.",
      response: ProcessorTemplatesSchema,
      handler: async () => ({ items: PROCESSOR_TEMPLATES }),
    }),
  ];
}
