/** REST: publish, rollout status, per-collector config history and rollback. */
import { Type } from "@sinclair/typebox";
import {
  AbortAnswerSchema,
  ConfigHistoryAnswerSchema,
  ConfigVersionSchema,
  DriftedAnswerSchema,
  EffectiveConfigSchema,
  HistoryEntrySchema,
  PublishPlanSchema,
  RolloutPageSchema,
  RolloutSchema,
  RolloutStatusSchema,
  StrategySchema,
} from "../../shared/rollouts.ts";
import type { Rollouts } from "../rollout/rollout.ts";
import type { TargetDelivery } from "../rollout/target-delivery.ts";
import type { TargetHistory } from "../rollout/history.ts";
import type { Attention } from "../rollout/attention.ts";
import type { StagedRollouts } from "../rollout/staged.ts";
import { NotFoundError } from "../errors.ts";
import { route, type Route } from "../http/route.ts";
import { Matchers } from "./collectors.ts";
import type { Collectors } from "../collectors/collectors.ts";
import type { Refs } from "../refs/refs.ts";
import { scopeOf, strategyOf } from "./rollout-options.ts";

const Scope = {
  collectorIds: Type.Optional(
    Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: 10_000, description: "These collectors only, each by id or name." }),
  ),
  match: Type.Optional(Matchers),
};

const PlanBody = Type.Object(Scope, { additionalProperties: false });

const PublishBody = Type.Object(
  {
    ...Scope,
    strategy: Type.Optional(StrategySchema),
    skipErrors: Type.Optional(
      Type.Boolean({
        description:
          "With collectorIds: publish to those whose config renders; the others keep theirs (listed in the rollout's skipped). Without, a publish always does so.",
      }),
    ),
  },
  { additionalProperties: false },
);

const AbortBody = Type.Object(
  { rollbackFailed: Type.Optional(Type.Boolean({ description: "Also roll back every released collector whose new config failed." })) },
  { additionalProperties: false },
);

/** What the publish, rollout and rollback routes use. */
export interface PublishApiDeps {
  collectors: Collectors;
  rollouts: Pick<Rollouts, "publish" | "plan">;
  delivery: Pick<TargetDelivery, "target" | "effective">;
  targetHistory: Pick<TargetHistory, "historyView" | "renderFailure" | "storedRendered" | "rollback" | "unpin" | "retry">;
  attention: Pick<Attention, "drifted">;
  staged: StagedRollouts;
  refs: Refs;
}

export function publishRoutes(deps: PublishApiDeps): Route[] {
  return [
    route({
      method: "POST",
      path: "/publish",
      scope: "config:publish",
      tag: "publish",
      summary:
        "Render the head commit for every affected collector (or those of collectorIds, each an id or a name, or of match) and deliver what changed, all at once or staged by a strategy. A collector whose config cannot be rendered keeps its own and is listed in skipped with the reason; a publish naming it in collectorIds is refused instead (409, unless skipErrors). 409 before the first commit and while a staged rollout is running or paused.",
      body: PublishBody,
      bodyOptional: true,
      slow: true,
      response: RolloutSchema,
      status: 202,
      handler: async ({ principal, body }) => {
        const options = body ?? {};
        return deps.rollouts.publish(principal, {
          ...(await scopeOf(deps, options)),
          ...(await strategyOf(deps, options.strategy)),
          skipErrors: options.skipErrors,
        });
      },
    }),
    route({
      method: "POST",
      path: "/publish/plan",
      scope: "config:read",
      tag: "publish",
      summary:
        "Send {} for the whole fleet; collectorIds take ids or names. What publishing the head commit would change, changing nothing: each collector's change with the diff of its rendered config (grouped by identical diff), how many are unchanged, and every collector whose config cannot be rendered (a fleet publish skips them).",
      body: PlanBody,
      slow: true,
      response: PublishPlanSchema,
      handler: async ({ body }) => deps.rollouts.plan(await scopeOf(deps, body)),
    }),
    route({
      method: "GET",
      path: "/publish/status",
      scope: "config:read",
      tag: "publish",
      summary:
        "Progress of the latest rollout (a publish, a rollback or an attribute change), or with scope=fleet of the staged rollout in progress or else the latest publish to the fleet: counts by config state and each collector's state.",
      query: Type.Object(
        {
          scope: Type.Optional(
            Type.Literal("fleet", {
              description:
                "The staged rollout in progress, else the latest publish to the fleet: not a later one to one collector, a rollback or an attribute change.",
            }),
          ),
        },
        { additionalProperties: false },
      ),
      response: RolloutStatusSchema,
      handler: ({ query }) => deps.staged.status(undefined, query.scope === "fleet" ? "fleet" : "any"),
    }),
    route({
      method: "POST",
      path: "/publish/{collectorId}",
      scope: "config:publish",
      tag: "publish",
      summary:
        "Publish the head commit to one collector, named by its id or its name (an id wins over an equal name; 409 ambiguous_name lists each collector of a shared name in details).",
      response: RolloutSchema,
      status: 202,
      handler: async ({ params, principal }) =>
        deps.rollouts.publish(principal, { collectorIds: [await deps.refs.resolve("collector", params.collectorId!, "collectorId")] }),
    }),
    route({
      method: "GET",
      path: "/rollouts",
      scope: "config:read",
      tag: "publish",
      summary: "Publishes, rollbacks and attribute changes (kind attributes), newest first, each with its collectors counted; cursor-paginated.",
      query: Type.Object(
        {
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
          cursor: Type.Optional(Type.String({ maxLength: 64, description: "nextCursor of the previous page." })),
        },
        { additionalProperties: false },
      ),
      response: RolloutPageSchema,
      handler: ({ query }) => deps.staged.list(query.limit ?? 50, query.cursor),
    }),
    route({
      method: "GET",
      path: "/rollouts/{id}",
      scope: "config:read",
      tag: "publish",
      summary: "One rollout's progress: counts by state, each collector's state, and for a staged rollout its batches, pause reason and ETA.",
      response: RolloutStatusSchema,
      handler: async ({ params }) => {
        await deps.staged.rollout(params.id!);
        return deps.staged.status(params.id!);
      },
    }),
    route({
      method: "POST",
      path: "/rollouts/{id}/pause",
      scope: "config:publish",
      tag: "publish",
      summary: "Pause a running staged rollout: no further batch is released until it is resumed; audited.",
      response: RolloutSchema,
      handler: ({ params, principal }) => deps.staged.pause(principal, params.id!),
    }),
    route({
      method: "POST",
      path: "/rollouts/{id}/resume",
      scope: "config:publish",
      tag: "publish",
      summary: "Resume a paused staged rollout, accepting the failures so far; audited.",
      response: RolloutSchema,
      handler: ({ params, principal }) => deps.staged.resume(principal, params.id!),
    }),
    route({
      method: "POST",
      path: "/rollouts/{id}/abort",
      scope: "config:publish",
      tag: "publish",
      summary: "Abort a staged rollout: batches not released keep their config; with rollbackFailed, failed collectors are rolled back. Audited.",
      body: AbortBody,
      bodyOptional: true,
      response: AbortAnswerSchema,
      handler: ({ params, principal, body }) => deps.staged.abort(principal, params.id!, body?.rollbackFailed ?? false),
    }),
    route({
      method: "GET",
      path: "/collectors/drifted",
      scope: "config:read",
      tag: "publish",
      summary:
        "Collectors that applied their target but report an effective config that differs from it in what they run (not merely in formatting), with the differing paths; the diff is on each collector's effective-config.",
      response: DriftedAnswerSchema,
      handler: async () => ({ items: await deps.attention.drifted() }),
    }),
    route({
      method: "GET",
      path: "/collectors/{id}/config-history",
      scope: "config:read",
      tag: "publish",
      summary:
        "Every config pushed to this collector, oldest first, each with what became of it, and why its config could not be rendered (a publish skipped it, or its attributes changed), while that stands.",
      response: ConfigHistoryAnswerSchema,
      handler: async ({ params }) => {
        const items = await deps.targetHistory.historyView(params.id!);
        const failure = await deps.targetHistory.renderFailure(params.id!);
        const renderFailure = failure && {
          commit: failure.commit,
          error: failure.error,
          at: failure.at,
          ...(failure.rolloutId ? { rolloutId: failure.rolloutId } : {}),
        };
        return { items, renderFailure };
      },
    }),
    route({
      method: "GET",
      path: "/collectors/{id}/config-history/{seq}",
      scope: "config:read",
      tag: "publish",
      summary: "One pushed config with its rendered body, so two versions can be compared.",
      response: ConfigVersionSchema,
      handler: async ({ params }) => {
        const entry = (await deps.targetHistory.historyView(params.id!)).find((e) => String(e.seq) === params.seq);
        if (!entry) throw new NotFoundError("Config version", params.seq);
        const rendered = await deps.targetHistory.storedRendered(entry.hash);
        if (!rendered) throw new NotFoundError("Rendered config", entry.hash);
        return { ...entry, contentType: rendered.contentType, body: rendered.body };
      },
    }),
    route({
      method: "GET",
      path: "/collectors/{id}/effective-config",
      scope: "config:read",
      tag: "publish",
      summary: "The config the collector last said it runs, beside the target it should run; null parts are not known yet.",
      response: EffectiveConfigSchema,
      handler: async ({ params }) => {
        const effective = await deps.delivery.effective(params.id!);
        const current = await deps.delivery.target(params.id!);
        return {
          target: current && {
            hash: current.target.targetHash,
            commit: current.target.targetCommit,
            state: current.target.state,
            error: current.target.error,
            body: current.rendered.body,
            ...(current.target.pinned ? { pinned: current.target.pinned } : {}),
            ...(current.target.collectorRollback ? { collectorRollback: current.target.collectorRollback } : {}),
            ...(current.target.drift ? { drift: current.target.drift } : {}),
          },
          effective: effective && { reportedAt: effective.reportedAt, files: effective.files, ...(effective.refused ? { refused: effective.refused } : {}) },
        };
      },
    }),
    route({
      method: "POST",
      path: "/collectors/{id}/rollback",
      scope: "config:publish",
      tag: "publish",
      summary:
        "Return the collector to its previous pushed config (409 when there is none), recorded as a new history entry, and pin it there: fleet publishes skip it until it is unpinned or a publish names it.",
      response: HistoryEntrySchema,
      status: 202,
      handler: ({ params, principal }) => deps.targetHistory.rollback(principal, params.id!),
    }),
    route({
      method: "DELETE",
      path: "/collectors/{id}/pin",
      scope: "config:publish",
      tag: "publish",
      summary: "Unpin a rolled-back collector, so the next fleet publish reaches it; 409 when it is not pinned. Audited.",
      status: 204,
      handler: ({ params, principal }) => deps.targetHistory.unpin(principal, params.id!),
    }),
    route({
      method: "POST",
      path: "/collectors/{id}/retry",
      scope: "config:publish",
      tag: "publish",
      summary: "Offer the collector its target again after it rolled back from it on its own (it is not re-offered otherwise); 409 when it did not. Audited.",
      status: 204,
      handler: ({ params, principal }) => deps.targetHistory.retry(principal, params.id!),
    }),
  ];
}
