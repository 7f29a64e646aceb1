/** REST: /routes — attach a pipeline to a source active on a collector, each named by id or name (refs.ts). */
import { Type } from "@sinclair/typebox";
import { RouteListSchema, RouteSchema, RouteWrittenSchema } from "../../shared/config-answers.ts";
import type { Routes } from "../configstore/routes.ts";
import { route, type Route as HttpRoute } from "../http/route.ts";
import type { Refs } from "../refs/refs.ts";
import { Id } from "../../shared/pipelines.ts";
import { RouteBody } from "./config-schemas.ts";

/** What the /routes routes use. */
export interface RoutesApiDeps {
  routes: Routes;
  refs: Pick<Refs, "resolve">;
}

/** A route body with its collector, source and pipeline each read as an id or a name. */
async function routeInput(refs: RoutesApiDeps["refs"], body: { collectorId: string; sourceId: string; pipelineId: string }) {
  return {
    collectorId: await refs.resolve("collector", body.collectorId, "collectorId"),
    sourceId: await refs.resolve("source", body.sourceId, "sourceId"),
    pipelineId: await refs.resolve("pipeline", body.pipelineId, "pipelineId"),
  };
}

export function routeRoutes(deps: RoutesApiDeps): HttpRoute[] {
  return [
    route({
      method: "POST",
      path: "/routes",
      scope: "config:write",
      tag: "routes",
      summary:
        "Attach a pipeline to a collector's active source. collectorId, sourceId and pipelineId each take an id or an exact name (an id wins; 409 ambiguous_name lists the candidates in details). differences warns when, on an Alloy collector, the source delivers other data than on the OpenTelemetry Collector (OpAMP).",
      body: RouteBody,
      response: RouteWrittenSchema,
      status: 201,
      handler: async ({ body, principal }) => deps.routes.create(principal, await routeInput(deps.refs, body)),
    }),
    route({
      method: "GET",
      path: "/routes",
      scope: "config:read",
      tag: "routes",
      summary: "List routes, optionally of one collector or pipeline.",
      query: Type.Object({ collectorId: Type.Optional(Id), pipelineId: Type.Optional(Id) }, { additionalProperties: false }),
      response: RouteListSchema,
      handler: async ({ query }) => ({ items: await deps.routes.list(query) }),
    }),
    route({
      method: "GET",
      path: "/routes/{id}",
      scope: "config:read",
      tag: "routes",
      summary: "Get one route.",
      response: RouteSchema,
      handler: ({ params }) => deps.routes.get(params.id!),
    }),
    route({
      method: "PUT",
      path: "/routes/{id}",
      scope: "config:write",
      tag: "routes",
      summary: "Change a route's collector, source or pipeline (each by id or name, as for POST); checked like a new route.",
      body: RouteBody,
      response: RouteWrittenSchema,
      handler: async ({ params, body, principal }) => deps.routes.update(principal, params.id!, await routeInput(deps.refs, body)),
    }),
    route({
      method: "DELETE",
      path: "/routes/{id}",
      scope: "config:write",
      tag: "routes",
      summary: "Delete a route.",
      status: 204,
      handler: ({ params, principal }) => deps.routes.delete(principal, params.id!),
    }),
  ];
}
