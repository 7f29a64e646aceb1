/** REST: /routes — attach a pipeline to a source active on a collector. */
import { Type } from "@sinclair/typebox";
import { RouteSchema } from "../../shared/config-answers.ts";
import type { Routes } from "../configstore/routes.ts";
import { route, type Route as HttpRoute } from "../http/route.ts";
import { Id, RouteBody } from "./config-schemas.ts";

/** What the /routes routes use. */
export interface RoutesApiDeps {
  routes: Routes;
}

export function routeRoutes(deps: RoutesApiDeps): HttpRoute[] {
  return [
    route({
      method: "POST",
      path: "/routes",
      scope: "config:write",
      tag: "routes",
      summary: "Attach a pipeline to a collector's active source.",
      body: RouteBody,
      response: RouteSchema,
      status: 201,
      handler: ({ body, principal }) => deps.routes.create(principal, body),
    }),
    route({
      method: "GET",
      path: "/routes",
      scope: "config:read",
      tag: "routes",
      summary: "List routes, optionally of one collector or pipeline.",
      query: Type.Object({ collectorId: Type.Optional(Id), pipelineId: Type.Optional(Id) }, { additionalProperties: false }),
      response: Type.Object({ items: Type.Array(RouteSchema) }),
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
      summary: "Change a route's collector, source or pipeline; checked like a new route.",
      body: RouteBody,
      response: RouteSchema,
      handler: ({ params, body, principal }) => deps.routes.update(principal, params.id!, body),
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
