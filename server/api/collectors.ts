/** REST: /collectors — the registry of managed collectors. */
import { Type } from "@sinclair/typebox";
import { CollectorDetailSchema, CollectorSchema, CollectorStatusSchema, EnvironmentSchema, ManagementModeSchema, RestartRequestSchema } from "../../shared/collectors.ts";
import { MatcherListError, parseMatcherList, type Matcher } from "../../shared/matchers.ts";
import { StringMap } from "../../shared/schema.ts";
import { RUNTIME_OF } from "../../shared/vocabulary.ts";
import { alloyMatchProblems, alloyUnrunnable } from "../collectors/alloy-matches.ts";
import { collectorAttributes } from "../collectors/attributes.ts";
import type { CollectorEdit, Collectors } from "../collectors/collectors.ts";
import type { Restarts } from "../collectors/restarts.ts";
import { compileFilter } from "../../shared/collector-filter.ts";
import type { ConfigStore } from "../configstore/configstore.ts";
import type { Routes } from "../configstore/routes.ts";
import { ConflictError, ValidationError, type ErrorDetail } from "../errors.ts";
import type { Retargeting } from "../rollout/retarget.ts";
import { route, type Route } from "../http/route.ts";
import { decodeCursor, encodeCursor, NextCursor, PageQuery } from "../http/schemas.ts";

const MATCHER_MAX = 1024;
const MATCHERS_MAX = 32;
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
    match: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: MATCHER_MAX }), {
        maxItems: MATCHERS_MAX,
        description: 'Alertmanager matcher over the collector\'s attributes (env=prod, region=~"us-.*"); repeat to require several.',
      }),
    ),
  },
  { additionalProperties: false },
);

export const Matchers = Type.Array(Type.String({ maxLength: MATCHER_MAX }), {
  maxItems: MATCHERS_MAX,
  description: 'Alertmanager matchers (env=prod, team!=test, region=~"us-.*"), fully anchored, RE2; all must hold.',
});

const TagsBody = Type.Object(
  {
    match: Type.Array(Type.String({ maxLength: MATCHER_MAX }), {
      minItems: 1,
      maxItems: MATCHERS_MAX,
      description: "Matchers selecting the collectors to edit; all must hold. At least one.",
    }),
    set: Type.Optional(StringMap),
    remove: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { maxItems: 64 })),
  },
  { additionalProperties: false },
);

const PreviewBody = Type.Object(
  {
    matchers: Matchers,
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, description: "Collectors in items (default 20)." })),
  },
  { additionalProperties: false },
);

/** Matchers from a request, or a 400 naming each bad one (`matchers[2]`) and its column. */
export function requestMatchers(inputs: readonly string[], path: string): Matcher[] {
  try {
    return parseMatcherList(inputs, path);
  } catch (error) {
    if (!(error instanceof MatcherListError)) throw error;
    throw new ValidationError(`Invalid matcher: ${error.message}`, error.details);
  }
}

/** What the /collectors routes use. */
export interface CollectorsApiDeps {
  collectors: Collectors;
  routes: Routes;
  configStore: Pick<ConfigStore, "worktree">;
  retargeting: Pick<Retargeting, "publishedSnapshot">;
  restarts: Pick<Restarts, "request">;
}

export function collectorRoutes(deps: CollectorsApiDeps): Route[] {
  /**
   * Refuses (409 `breaks_matched_collectors`, nothing written) edits that would make an Alloy
   * collector match a pipeline it cannot run, in the working tree (the next publish) or as
   * published (attribute changes render it at once, rollout/retarget.ts); as pipeline writes
   * that would select one are refused.
   */
  const refuseAlloyMatches = async (edits: CollectorEdit[]): Promise<void> => {
    if (!edits.some((e) => RUNTIME_OF[e.after.managementMode] === "alloy")) return;
    const snapshots = [await deps.configStore.worktree(), await deps.retargeting.publishedSnapshot()];
    const details = new Map<string, ErrorDetail>();
    for (const snapshot of snapshots) {
      if (snapshot) for (const detail of alloyMatchProblems(alloyUnrunnable(snapshot), edits)) details.set(detail.message, detail);
    }
    const [first] = details.values();
    if (first) throw new ConflictError(`This edit would make an Alloy collector match a pipeline it cannot run: ${first.message}.`, "breaks_matched_collectors", [...details.values()]);
  };

  return [
    route({
      method: "POST",
      path: "/collectors",
      scope: "collectors:write",
      tag: "collectors",
      summary: "Create a collector record (status pending until it connects); 409 when an Alloy one would match a pipeline it cannot run.",
      body: CreateBody,
      response: CollectorSchema,
      status: 201,
      handler: ({ body, principal }) => deps.collectors.create(principal, body, refuseAlloyMatches),
    }),
    route({
      method: "GET",
      path: "/collectors",
      scope: "collectors:read",
      tag: "collectors",
      summary: "List collectors, filtered by tag, status, environment, mode, text or attribute matchers; cursor-paginated.",
      query: ListQuery,
      response: Type.Object({ items: Type.Array(CollectorSchema), nextCursor: NextCursor }),
      handler: async ({ query }) => {
        const { limit = 100, cursor, tag, match, ...rest } = query;
        const matchers = match === undefined ? undefined : requestMatchers(match, "match");
        const page = await deps.collectors.list(compileFilter({ ...rest, tags: tag, match: matchers }), limit, decodeCursor(cursor));
        return { items: page.items, nextCursor: page.nextCursor === null ? null : encodeCursor(page.nextCursor) };
      },
    }),
    route({
      method: "GET",
      path: "/collectors/{id}",
      scope: "collectors:read",
      tag: "collectors",
      summary: "Get one collector, with its attributes and where each comes from (reported, set, virtual).",
      response: CollectorDetailSchema,
      handler: async ({ params }) => {
        const collector = await deps.collectors.get(params.id!);
        return { ...collector, attributes: collectorAttributes(collector) };
      },
    }),
    route({
      method: "POST",
      path: "/collectors/tags",
      scope: "collectors:write",
      tag: "collectors",
      summary:
        "Set and remove tags on every collector the matchers select; audited (collector.tags). 409, nothing written, when an Alloy collector would come to match a pipeline it cannot run.",
      body: TagsBody,
      response: Type.Object({
        matched: Type.Integer({ description: "Collectors the matchers selected." }),
        changed: Type.Integer({ description: "Of those, collectors whose tags changed." }),
      }),
      handler: async ({ body, principal }) => {
        const set = body.set ?? {};
        const remove = body.remove ?? [];
        if (Object.keys(set).length === 0 && remove.length === 0) {
          throw new ValidationError("Nothing to do: give set, remove or both.", [{ path: "set", message: "set or remove must name at least one tag" }]);
        }
        const matchers = requestMatchers(body.match, "match");
        return deps.collectors.editTags(principal, compileFilter({ match: matchers }), { set, remove }, { match: body.match }, refuseAlloyMatches);
      },
    }),
    route({
      method: "POST",
      path: "/matchers/preview",
      scope: "collectors:read",
      tag: "collectors",
      summary: "How many collectors the matchers select, and the first of them (no matchers: every collector).",
      body: PreviewBody,
      response: Type.Object({
        count: Type.Integer({ description: "Every collector the matchers select." }),
        items: Type.Array(CollectorSchema, { description: "The first of them, in id order." }),
      }),
      handler: async ({ body }) => {
        const keep = compileFilter({ match: requestMatchers(body.matchers, "matchers") });
        const all = await deps.collectors.list(keep, Number.POSITIVE_INFINITY);
        return { count: all.items.length, items: all.items.slice(0, body.limit ?? 20) };
      },
    }),
    route({
      method: "PATCH",
      path: "/collectors/{id}",
      scope: "collectors:write",
      tag: "collectors",
      summary:
        "Change a collector's name, environment, management mode or tags (tags are replaced whole); 409 when an Alloy collector would come to match a pipeline it cannot run.",
      body: PatchBody,
      response: CollectorSchema,
      handler: async ({ params, body, principal }) => {
        if (body.managementMode !== undefined) {
          // A collector switched to another runtime must still run what it is given (a debug destination on Alloy would not).
          const problems = await deps.routes.problemsOnRuntime(params.id!, RUNTIME_OF[body.managementMode]);
          if (problems.length > 0) throw new ValidationError(`The collector cannot change its management mode: ${problems[0]!.message}.`, problems);
        }
        return deps.collectors.update(principal, params.id!, body, refuseAlloyMatches);
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
    route({
      method: "POST",
      path: "/collectors/{id}/restart",
      scope: "config:publish",
      tag: "collectors",
      summary:
        "Restart the collector process: its OpAMP supervisor is sent the restart command (at once when connected, else with its next message within 10 minutes; once). 409 for a remote-config collector. Audited.",
      response: RestartRequestSchema,
      status: 202,
      handler: async ({ params, principal }) => {
        const { requestId, requestedAt } = await deps.restarts.request(principal, params.id!);
        return { requestId, requestedAt };
      },
    }),
  ];
}
