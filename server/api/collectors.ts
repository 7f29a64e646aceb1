/** REST: /collectors — the registry of managed collectors. */
import { Type } from "@sinclair/typebox";
import {
  CollectorDetailSchema,
  CollectorSchema,
  CollectorStatusSchema,
  EditPlanAnswerSchema,
  EnvironmentSchema,
  ManagementModeSchema,
  MatchersPreviewSchema,
  RestartRequestSchema,
  TagEditAnswerSchema,
  TagEditPlanSchema,
} from "../../shared/collectors.ts";
import { CollectorPageSchema } from "../../shared/collector-page.ts";
import { StringMap } from "../../shared/schema.ts";
import { RUNTIME_OF } from "../../shared/vocabulary.ts";
import { alloyMatchProblems, alloyUnrunnable } from "../configstore/alloy-matches.ts";
import { collectorAttributes } from "../collectors/attributes.ts";
import type { CollectorEdit, Collectors, VetEdits } from "../collectors/collectors.ts";
import type { Restarts } from "../collectors/restarts.ts";
import { compileFilter, tagFilters } from "../../shared/collector-filter.ts";
import { ATTENTION_REASONS, isConfigReason, recordReasons } from "../../shared/attention.ts";
import type { ConfigStore } from "../configstore/configstore.ts";
import type { Routes } from "../configstore/routes.ts";
import { ConflictError, ValidationError, type ErrorDetail } from "../errors.ts";
import type { Retargeting } from "../rollout/retarget.ts";
import type { Attention } from "../rollout/attention.ts";
import type { AttributeRollouts } from "../rollout/attribute-rollout.ts";
import type { Principal } from "../auth/service-accounts.ts";
import { StrategySchema, type Rollout, type Strategy } from "../../shared/rollouts.ts";
import { targetingMatchers } from "./matchers.ts";
import { strategyOf } from "./rollout-options.ts";
import type { Refs } from "../refs/refs.ts";
import { route, type Route } from "../http/route.ts";
import { decodeCursor, encodeCursor, PageQuery } from "../http/schemas.ts";

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
    attention: Type.Optional(
      Type.Union(
        ATTENTION_REASONS.map((r) => Type.Literal(r)),
        {
          description:
            'Only the collectors GET /dashboard counts under this reason in "Needs attention": failed, offline, unrenderable, pinned, drifted or reportingOnly.',
        },
      ),
    ),
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

const TagEditFields = {
  match: Type.Array(Type.String({ maxLength: MATCHER_MAX }), {
    minItems: 1,
    maxItems: MATCHERS_MAX,
    description: "Matchers selecting the collectors to edit; all must hold. At least one.",
  }),
  set: Type.Optional(StringMap),
  remove: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 128 }), { maxItems: 64 })),
};

const TagsPlanBody = Type.Object(TagEditFields, { additionalProperties: false });

const TagsBody = Type.Object(
  {
    ...TagEditFields,
    strategy: Type.Optional(StrategySchema),
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

/** What the /collectors routes use. */
export interface CollectorsApiDeps {
  collectors: Collectors;
  routes: Routes;
  configStore: Pick<ConfigStore, "worktree">;
  retargeting: Pick<Retargeting, "publishedSnapshot">;
  attributeRollouts: Pick<AttributeRollouts, "plan" | "deployment">;
  restarts: Pick<Restarts, "request">;
  refs: Pick<Refs, "resolveAll">;
  attention: Pick<Attention, "attentionIds" | "configAttention">;
}

/** A bulk tag edit from a request: something to set or remove, and the matchers selecting the collectors. */
async function tagEditOf(collectors: Pick<Collectors, "refuseUntrusted">, body: { match: string[]; set?: Record<string, string>; remove?: string[] }) {
  const set = body.set ?? {};
  const remove = body.remove ?? [];
  if (Object.keys(set).length === 0 && remove.length === 0) {
    throw new ValidationError("Nothing to do: give set, remove or both.", [{ path: "set", message: "set or remove must name at least one tag" }]);
  }
  return { edit: { set, remove }, matchers: await targetingMatchers(collectors, body.match, "match") };
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
      if (snapshot)
        for (const detail of alloyMatchProblems(alloyUnrunnable(snapshot), edits, deps.collectors.trust.keys())) details.set(detail.message, detail);
    }
    const [first] = details.values();
    if (first)
      throw new ConflictError(`This edit would make an Alloy collector match a pipeline it cannot run: ${first.message}.`, "breaks_matched_collectors", [
        ...details.values(),
      ]);
  };

  /**
   * Vets an edit and deploys it (rollout/attribute-rollout.ts): refused as
   * refuseAlloyMatches says; where it changes a collector's config, 403
   * without config:publish, else written with its rollout (`onRollout`
   * hears it).
   */
  const deploying =
    (principal: Principal, strategy?: Strategy, onRollout?: (rollout: Rollout | null) => void): VetEdits =>
    async (edits) => {
      await refuseAlloyMatches(edits);
      const options = await strategyOf(deps, strategy);
      const deployment = await deps.attributeRollouts.deployment(principal, edits, principal.scopes.has("config:publish"), options);
      onRollout?.(deployment.rollout);
      return deployment;
    };

  return [
    route({
      method: "POST",
      path: "/collectors",
      scope: "collectors:write",
      tag: "collectors",
      summary:
        "Create a collector record (status pending until it connects); 409 when an Alloy one would match a pipeline it cannot run. When its tags or environment give it a published config, that is a deployment: 403 without config:publish, else delivered as a rollout of kind attributes.",
      body: CreateBody,
      response: CollectorSchema,
      status: 201,
      handler: ({ body, principal }) => deps.collectors.create(principal, body, deploying(principal)),
    }),
    route({
      method: "GET",
      path: "/collectors",
      scope: "collectors:read",
      // A walk of the fleet may wait its turn and run up to Collectors SCAN_BUDGET_MS (collectors.ts).
      slow: true,
      tag: "collectors",
      summary:
        "List collectors, filtered by tag, status, environment, mode, text, attribute matchers or why they need attention (`attention`: the collectors GET /dashboard counts under that reason); each with the reasons it needs attention; cursor-paginated.",
      query: ListQuery,
      response: CollectorPageSchema,
      handler: async ({ query }) => {
        const { limit = 100, cursor, tag, match, attention, ...rest } = query;
        const matchers = match === undefined ? undefined : await targetingMatchers(deps.collectors, match, "match");
        // A config reason is the dashboard's own list (Attention.attention): one read of the targets, as GET /dashboard costs.
        const attending = attention !== undefined && isConfigReason(attention) ? await deps.attention.attentionIds(attention) : undefined;
        // The matchers are answered from the attribute index (Collectors.list), the rest of the filter on what they and the tags select.
        const keep = compileFilter({ ...rest, tags: tag, attention, attending });
        const page = await deps.collectors.list(keep, limit, decodeCursor(cursor), { matchers, tags: tagFilters(tag) });
        const config = await deps.attention.configAttention(page.items);
        const items = page.items.map((c) => {
          const reasons = new Set([...recordReasons(c), ...(config.get(c.id) ?? [])]);
          return { ...c, attention: ATTENTION_REASONS.filter((r) => reasons.has(r)) };
        });
        return { items, nextCursor: page.nextCursor === null ? null : encodeCursor(page.nextCursor) };
      },
    }),
    route({
      method: "GET",
      path: "/collectors/{id}",
      scope: "collectors:read",
      tag: "collectors",
      summary:
        "Get one collector, with every attribute, where each comes from (reported, set, virtual) and whether matchers read it (`targets`: a reported one only when its key is trusted).",
      response: CollectorDetailSchema,
      handler: async ({ params }) => {
        const collector = await deps.collectors.get(params.id!);
        return { ...collector, attributes: collectorAttributes(collector, deps.collectors.trust.keys()) };
      },
    }),
    route({
      method: "POST",
      path: "/collectors/tags",
      scope: "collectors:write",
      // A walk of the fleet may wait its turn and run up to Collectors SCAN_BUDGET_MS (collectors.ts).
      slow: true,
      tag: "collectors",
      summary:
        "Set and remove tags on every collector the matchers select; audited (collector.tags). An edit that changes any collector's config is a deployment: 403 without config:publish; else delivered as a rollout of kind attributes (all at once, or staged by strategy) in the same write. 409, nothing written, when an Alloy collector would come to match a pipeline it cannot run, or a config would change while a staged rollout is running or paused. POST /collectors/tags/plan shows the change first.",
      body: TagsBody,
      response: TagEditAnswerSchema,
      handler: async ({ body, principal }) => {
        const { edit, matchers } = await tagEditOf(deps.collectors, body);
        let rollout: Rollout | null = null;
        const result = await deps.collectors.editTags(
          principal,
          matchers,
          edit,
          { match: body.match },
          deploying(principal, body.strategy, (r) => (rollout = r)),
        );
        return { ...result, rollout };
      },
    }),
    route({
      method: "POST",
      path: "/collectors/tags/plan",
      scope: "config:read",
      tag: "collectors",
      summary:
        "What POST /collectors/tags with this edit would change, writing nothing: the collectors it selects and changes, and the plan of their configs (each change with its diff, grouped; those that cannot be rendered and would be skipped).",
      body: TagsPlanBody,
      slow: true,
      response: TagEditPlanSchema,
      handler: async ({ body }) => {
        const { edit, matchers } = await tagEditOf(deps.collectors, body);
        const { matched, edits } = await deps.collectors.tagEdits(matchers, edit);
        return { matched, changed: edits.length, plan: await deps.attributeRollouts.plan(edits) };
      },
    }),
    route({
      method: "POST",
      path: "/matchers/preview",
      scope: "collectors:read",
      // A walk of the fleet may wait its turn and run up to Collectors SCAN_BUDGET_MS (collectors.ts).
      slow: true,
      tag: "collectors",
      summary: "How many collectors the matchers select, and the first of them (no matchers: every collector).",
      body: PreviewBody,
      response: MatchersPreviewSchema,
      handler: async ({ body }) => {
        const matchers = await targetingMatchers(deps.collectors, body.matchers, "matchers");
        const all = await deps.collectors.list(() => true, Number.POSITIVE_INFINITY, undefined, { matchers });
        return { count: all.items.length, items: all.items.slice(0, body.limit ?? 20) };
      },
    }),
    route({
      method: "PATCH",
      path: "/collectors/{id}",
      scope: "collectors:write",
      tag: "collectors",
      summary:
        "Change a collector's name, environment, management mode or tags (tags are replaced whole); 409 when an Alloy collector would come to match a pipeline it cannot run. An edit that changes its config is a deployment: 403 without config:publish, else delivered as a rollout of kind attributes in the same write (409 while a staged rollout is running or paused). POST /collectors/{id}/edit-plan shows the change first.",
      body: PatchBody,
      response: CollectorSchema,
      handler: async ({ params, body, principal }) => {
        if (body.managementMode !== undefined) {
          // A collector switched to another runtime must still run what it is given (a debug destination on Alloy would not).
          const problems = await deps.routes.problemsOnRuntime(params.id!, RUNTIME_OF[body.managementMode]);
          if (problems.length > 0) throw new ValidationError(`The collector cannot change its management mode: ${problems[0]!.message}.`, problems);
        }
        return deps.collectors.update(principal, params.id!, body, deploying(principal));
      },
    }),
    route({
      method: "POST",
      path: "/collectors/{id}/edit-plan",
      scope: "config:read",
      tag: "collectors",
      summary: "What PATCH /collectors/{id} with this body would change in the collector's config, writing nothing (the plan a publish answers).",
      body: PatchBody,
      response: EditPlanAnswerSchema,
      handler: async ({ params, body }) => {
        const { edit } = await deps.collectors.patchEdit(params.id!, body);
        return { plan: await deps.attributeRollouts.plan([edit]) };
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
