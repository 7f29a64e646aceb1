/** REST: /collectors/{id}/sources and /destinations — what is active on one collector; secrets in overrides are write-only. */
import {
  DestinationActivationListSchema,
  DestinationActivationSchema,
  SourceActivationListSchema,
  SourceActivationSchema,
} from "../../shared/config-answers.ts";
import type { Activations } from "../configstore/activations.ts";
import { route, type Route } from "../http/route.ts";
import type { Refs } from "../refs/refs.ts";
import { DestinationActivationBody, SourceActivationBody } from "./config-schemas.ts";

/** What the /activations routes use. */
export interface ActivationsApiDeps {
  activations: Activations;
  refs: Pick<Refs, "resolve">;
}

export function activationRoutes(deps: ActivationsApiDeps): Route[] {
  return [
    route({
      method: "POST",
      path: "/collectors/{id}/sources",
      scope: "config:write",
      tag: "activations",
      summary:
        "Activate a source on the collector with per-collector overrides (activating again replaces them). sourceId takes an id or an exact name (an id wins; 409 ambiguous_name lists the candidates in details).",
      body: SourceActivationBody,
      response: SourceActivationSchema,
      status: 201,
      handler: async ({ params, body, principal }) =>
        deps.activations.activateSource(principal, params.id!, { ...body, sourceId: await deps.refs.resolve("source", body.sourceId, "sourceId") }),
    }),
    route({
      method: "GET",
      path: "/collectors/{id}/sources",
      scope: "config:read",
      tag: "activations",
      summary: "Sources active on the collector.",
      response: SourceActivationListSchema,
      handler: async ({ params }) => ({ items: (await deps.activations.get(params.id!)).sources }),
    }),
    route({
      method: "DELETE",
      path: "/collectors/{id}/sources/{sourceId}",
      scope: "config:write",
      tag: "activations",
      summary: "Deactivate a source on the collector; 409 while routes read it.",
      status: 204,
      handler: ({ params, principal }) => deps.activations.deactivateSource(principal, params.id!, params.sourceId!),
    }),
    route({
      method: "POST",
      path: "/collectors/{id}/destinations",
      scope: "config:write",
      tag: "activations",
      summary:
        "Activate a destination on the collector with per-collector overrides and tags (activating again replaces them). destinationId takes an id or an exact name (an id wins; 409 ambiguous_name lists the candidates in details).",
      body: DestinationActivationBody,
      response: DestinationActivationSchema,
      status: 201,
      handler: async ({ params, body, principal }) =>
        deps.activations.activateDestination(principal, params.id!, {
          ...body,
          destinationId: await deps.refs.resolve("destination", body.destinationId, "destinationId"),
        }),
    }),
    route({
      method: "GET",
      path: "/collectors/{id}/destinations",
      scope: "config:read",
      tag: "activations",
      summary: "Destinations active on the collector.",
      response: DestinationActivationListSchema,
      handler: async ({ params }) => ({ items: (await deps.activations.get(params.id!)).destinations }),
    }),
    route({
      method: "DELETE",
      path: "/collectors/{id}/destinations/{destinationId}",
      scope: "config:write",
      tag: "activations",
      summary: "Deactivate a destination on the collector; 409 while a routed pipeline sends to it by name.",
      status: 204,
      handler: ({ params, principal }) => deps.activations.deactivateDestination(principal, params.id!, params.destinationId!),
    }),
  ];
}
