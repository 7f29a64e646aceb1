/**
 * REST: /sources and /destinations — typed records validated by the catalog;
 * edits land in the working tree. Secrets in sensitive fields are write-only:
 * no answer carries one (config-schemas.ts says how each form reads).
 */
import { ComponentListSchema, ComponentSchema } from "../../shared/config-answers.ts";
import type { Components } from "../configstore/components.ts";
import { route, type Route } from "../http/route.ts";
import { ComponentBody } from "./config-schemas.ts";

export function componentRoutes(components: Components): Route[] {
  const kind = components.kind;
  const base = `/${kind}s`;
  const tag = `${kind}s`;
  return [
    route({
      method: "POST",
      path: base,
      scope: "config:write",
      tag,
      summary: `Create a ${kind} {name, type, config}; config is checked against the catalog schema of its type, and secrets in sensitive fields are stored encrypted.`,
      body: ComponentBody,
      response: ComponentSchema,
      status: 201,
      handler: ({ body, principal }) => components.create(principal, body),
    }),
    route({
      method: "GET",
      path: base,
      scope: "config:read",
      tag,
      summary: `List ${kind}s in the working tree.`,
      response: ComponentListSchema,
      handler: async () => ({ items: await components.list() }),
    }),
    route({
      method: "GET",
      path: `${base}/{id}`,
      scope: "config:read",
      tag,
      summary: `Get one ${kind}.`,
      response: ComponentSchema,
      handler: ({ params }) => components.get(params.id!),
    }),
    route({
      method: "PUT",
      path: `${base}/{id}`,
      scope: "config:write",
      tag,
      summary: `Replace a ${kind}'s name and config (its type cannot change); a sensitive field sent back as read keeps its secret.`,
      body: ComponentBody,
      response: ComponentSchema,
      handler: ({ params, body, principal }) => components.replace(principal, params.id!, body),
    }),
    route({
      method: "DELETE",
      path: `${base}/{id}`,
      scope: "config:write",
      tag,
      summary: `Delete a ${kind}; 409 names whatever still uses it.`,
      status: 204,
      handler: ({ params, principal }) => components.delete(principal, params.id!),
    }),
  ];
}
