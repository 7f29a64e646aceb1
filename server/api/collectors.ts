/** REST: /collectors — the registry of managed collectors. */
import { Type } from "@sinclair/typebox";
import { CollectorSchema, CollectorStatusSchema, EnvironmentSchema, ManagementModeSchema } from "../../shared/collectors.ts";
import { StringMap } from "../../shared/schema.ts";
import { RUNTIME_OF } from "../../shared/vocabulary.ts";
import type { Collectors } from "../collectors/collectors.ts";
import { compileFilter } from "../../shared/collector-filter.ts";
import type { Routes } from "../configstore/routes.ts";
import { ValidationError } from "../errors.ts";
import { route, type Route } from "../http/route.ts";
import { decodeCursor, encodeCursor, NextCursor, PageQuery } from "../http/schemas.ts";

const Name = Type.String({ minLength: 1, maxLength: 200, pattern: "\\S", errorMessage: "must be a non-blank string of at most 200 characters" });
const CreateBody = Type.Object(
  {
    name: Name,
    environment: Type.Optional(EnvironmentSchema),
    managementMode: Type.Optional(ManagementModeSchema),
    tags: Type.Optional(StringMap),
  },
  { additionalProperties: false },
);

const PatchBody = Type.Object(
  {
    name: Type.Optional(Name),
    environment: Type.Optional(EnvironmentSchema),
    managementMode: Type.Optional(ManagementModeSchema),
    tags: Type.Optional(StringMap),
  },
  { additionalProperties: false, minProperties: 1, errorMessage: "must change at least one of name, environment, managementMode, tags" },
);

const ListQuery = Type.Object(
  {
    ...PageQuery,
    tag: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: "key:value (or key); repeat to require several." })),
    status: Type.Optional(CollectorStatusSchema),
    environment: Type.Optional(Type.String()),
    managementMode: Type.Optional(ManagementModeSchema),
    q: Type.Optional(Type.String({ maxLength: 200, description: "Text in name, id or environment." })),
  },
  { additionalProperties: false },
);

/** What the /collectors routes use. */
export interface CollectorsApiDeps {
  collectors: Collectors;
  routes: Routes;
}

export function collectorRoutes(deps: CollectorsApiDeps): Route[] {
  return [
    route({
      method: "POST",
      path: "/collectors",
      scope: "collectors:write",
      tag: "collectors",
      summary: "Create a collector record (status pending until it connects).",
      body: CreateBody,
      response: CollectorSchema,
      status: 201,
      handler: ({ body, principal }) => deps.collectors.create(principal, body),
    }),
    route({
      method: "GET",
      path: "/collectors",
      scope: "collectors:read",
      tag: "collectors",
      summary: "List collectors, filtered by tag, status, environment, mode or text; cursor-paginated.",
      query: ListQuery,
      response: Type.Object({ items: Type.Array(CollectorSchema), nextCursor: NextCursor }),
      handler: async ({ query }) => {
        const { limit = 100, cursor, tag, ...rest } = query;
        const page = await deps.collectors.list(compileFilter({ ...rest, tags: tag }), limit, decodeCursor(cursor));
        return { items: page.items, nextCursor: page.nextCursor === null ? null : encodeCursor(page.nextCursor) };
      },
    }),
    route({
      method: "GET",
      path: "/collectors/{id}",
      scope: "collectors:read",
      tag: "collectors",
      summary: "Get one collector.",
      response: CollectorSchema,
      handler: ({ params }) => deps.collectors.get(params.id!),
    }),
    route({
      method: "PATCH",
      path: "/collectors/{id}",
      scope: "collectors:write",
      tag: "collectors",
      summary: "Change a collector's name, environment, management mode or tags (tags are replaced whole).",
      body: PatchBody,
      response: CollectorSchema,
      handler: async ({ params, body, principal }) => {
        if (body.managementMode !== undefined) {
          // A collector switched to another runtime must still run what it is given (a debug destination on Alloy would not).
          const problems = await deps.routes.problemsOnRuntime(params.id!, RUNTIME_OF[body.managementMode]);
          if (problems.length > 0) throw new ValidationError(`The collector cannot change its management mode: ${problems[0]!.message}.`, problems);
        }
        return deps.collectors.update(principal, params.id!, body);
      },
    }),
    route({
      method: "DELETE",
      path: "/collectors/{id}",
      scope: "collectors:write",
      tag: "collectors",
      summary: "Delete a collector record.",
      status: 204,
      handler: ({ params, principal }) => deps.collectors.delete(principal, params.id!),
    }),
  ];
}
