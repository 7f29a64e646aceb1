/** REST: /collectors — the registry of managed collectors. */
import { Type } from "@sinclair/typebox";
import { MANAGEMENT_MODES, RUNTIME_OF } from "../../shared/vocabulary.ts";
import { COLLECTOR_STATUSES, type Collectors } from "../collectors/collectors.ts";
import { compileFilter } from "../collectors/filter.ts";
import type { Routes } from "../configstore/routes.ts";
import { ValidationError } from "../errors.ts";
import { route, type Route } from "../http/route.ts";
import { decodeCursor, encodeCursor, NextCursor, PageQuery } from "../http/schemas.ts";
import { StringMap } from "../lib/schemas.ts";

const Name = Type.String({ minLength: 1, maxLength: 200, pattern: "\\S", errorMessage: "must be a non-blank string of at most 200 characters" });
const Environment = Type.Union([Type.String({ maxLength: 200 }), Type.Null()]);
export const Mode = Type.Union(MANAGEMENT_MODES.map((m) => Type.Literal(m)), { errorMessage: `must be one of ${MANAGEMENT_MODES.join(", ")}` });
const Status = Type.Union(COLLECTOR_STATUSES.map((s) => Type.Literal(s)));

export const Collector = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    environment: Environment,
    managementMode: Mode,
    tags: StringMap,
    status: Status,
    lastSeen: Type.Union([Type.String({ format: "date-time" }), Type.Null()], { description: "Last contact, to within 15 s." }),
    health: Type.Union([
      Type.Object({
        channel: Type.Union([Type.Literal("opamp"), Type.Literal("remotecfg")]),
        intervalSeconds: Type.Number({ description: "Promised seconds between contacts; offline after three times this." }),
        healthy: Type.Union([Type.Boolean(), Type.Null()]),
        error: Type.Union([Type.String(), Type.Null()]),
        acceptsRemoteConfig: Type.Optional(
          Type.Boolean({
            description:
              "False: reporting only — the collector cannot accept remote config (OpAMP without AcceptsRemoteConfig, e.g. run from its own file); run it under the OpAMP supervisor.",
          }),
        ),
      }),
      Type.Null(),
    ]),
    createdAt: Type.String({ format: "date-time" }),
    updatedAt: Type.String({ format: "date-time" }),
  },
  { title: "Collector" },
);

const CreateBody = Type.Object(
  {
    name: Name,
    environment: Type.Optional(Environment),
    managementMode: Type.Optional(Mode),
    tags: Type.Optional(StringMap),
  },
  { additionalProperties: false },
);

const PatchBody = Type.Object(
  {
    name: Type.Optional(Name),
    environment: Type.Optional(Environment),
    managementMode: Type.Optional(Mode),
    tags: Type.Optional(StringMap),
  },
  { additionalProperties: false, minProperties: 1, errorMessage: "must change at least one of name, environment, managementMode, tags" },
);

const ListQuery = Type.Object(
  {
    ...PageQuery,
    tag: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: "key:value (or key); repeat to require several." })),
    status: Type.Optional(Status),
    environment: Type.Optional(Type.String()),
    managementMode: Type.Optional(Mode),
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
      response: Collector,
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
      response: Type.Object({ items: Type.Array(Collector), nextCursor: NextCursor }),
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
      response: Collector,
      handler: ({ params }) => deps.collectors.get(params.id!),
    }),
    route({
      method: "PATCH",
      path: "/collectors/{id}",
      scope: "collectors:write",
      tag: "collectors",
      summary: "Change a collector's name, environment, management mode or tags (tags are replaced whole).",
      body: PatchBody,
      response: Collector,
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
