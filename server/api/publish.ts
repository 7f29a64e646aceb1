/** REST: publish, rollout status, per-collector config history and rollback. */
import { Type } from "@sinclair/typebox";
import {
  ConfigVersionSchema,
  EffectiveConfigSchema,
  HistoryEntrySchema,
  PublishPlanSchema,
  RolloutSchema,
  RolloutStatusSchema,
} from "../../shared/rollouts.ts";
import type { Rollouts } from "../rollout/rollout.ts";
import { NotFoundError } from "../errors.ts";
import { route, type Route } from "../http/route.ts";
import { Matchers, requestMatchers } from "./collectors.ts";
import { ValidationError } from "../errors.ts";

const PlanBody = Type.Object(
  {
    collectorIds: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 10_000, description: "Plan for these collectors only." })),
    match: Type.Optional(Matchers),
  },
  { additionalProperties: false },
);

/** What the publish, rollout and rollback routes use. */
export interface PublishApiDeps {
  rollouts: Rollouts;
}

export function publishRoutes(deps: PublishApiDeps): Route[] {
  return [
    route({
      method: "POST",
      path: "/publish",
      scope: "config:publish",
      tag: "publish",
      summary: "Render the head commit for every affected collector and deliver what changed; 409 before the first commit.",
      response: RolloutSchema,
      status: 202,
      handler: ({ principal }) => deps.rollouts.publish(principal),
    }),
    route({
      method: "POST",
      path: "/publish/plan",
      scope: "config:read",
      tag: "publish",
      summary:
        "Send {} for the whole fleet. What publishing the head commit would change, changing nothing: each collector's change with the diff of its rendered config (grouped by identical diff), how many are unchanged, and every collector whose config cannot be rendered.",
      body: PlanBody,
      response: PublishPlanSchema,
      handler: ({ body }) => {
        if (body.collectorIds !== undefined && body.match !== undefined) {
          throw new ValidationError("Give collectorIds or match, not both.", [{ path: "match", message: "cannot be combined with collectorIds" }]);
        }
        return deps.rollouts.plan({ collectorIds: body.collectorIds, match: body.match && requestMatchers(body.match, "match") });
      },
    }),
    route({
      method: "GET",
      path: "/publish/status",
      scope: "config:read",
      tag: "publish",
      summary: "Progress of the latest publish or rollback: counts by config state and each collector's state.",
      response: RolloutStatusSchema,
      handler: () => deps.rollouts.status(),
    }),
    route({
      method: "POST",
      path: "/publish/{collectorId}",
      scope: "config:publish",
      tag: "publish",
      summary: "Publish the head commit to one collector.",
      response: RolloutSchema,
      status: 202,
      handler: ({ params, principal }) => deps.rollouts.publish(principal, params.collectorId!),
    }),
    route({
      method: "GET",
      path: "/collectors/{id}/config-history",
      scope: "config:read",
      tag: "publish",
      summary: "Every config pushed to this collector, oldest first.",
      response: Type.Object({ items: Type.Array(HistoryEntrySchema) }),
      handler: async ({ params }) => ({ items: await deps.rollouts.history(params.id!) }),
    }),
    route({
      method: "GET",
      path: "/collectors/{id}/config-history/{seq}",
      scope: "config:read",
      tag: "publish",
      summary: "One pushed config with its rendered body, so two versions can be compared.",
      response: ConfigVersionSchema,
      handler: async ({ params }) => {
        const entry = (await deps.rollouts.history(params.id!)).find((e) => String(e.seq) === params.seq);
        if (!entry) throw new NotFoundError("Config version", params.seq);
        const rendered = await deps.rollouts.storedRendered(entry.hash);
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
        const effective = await deps.rollouts.effective(params.id!);
        const current = await deps.rollouts.target(params.id!);
        return {
          target: current && {
            hash: current.target.targetHash,
            commit: current.target.targetCommit,
            state: current.target.state,
            error: current.target.error,
            body: current.rendered.body,
          },
          effective: effective && { reportedAt: effective.reportedAt, files: effective.files },
        };
      },
    }),
    route({
      method: "POST",
      path: "/collectors/{id}/rollback",
      scope: "config:publish",
      tag: "publish",
      summary: "Return the collector to its previous pushed config (409 when there is none); recorded as a new history entry.",
      response: HistoryEntrySchema,
      status: 202,
      handler: ({ params, principal }) => deps.rollouts.rollback(principal, params.id!),
    }),
  ];
}
