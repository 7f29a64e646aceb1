/** REST: publish, rollout status, per-collector config history and rollback. */
import { Type } from "@sinclair/typebox";
import type { Rollouts } from "../rollout/rollout.ts";
import { NotFoundError } from "../errors.ts";
import { route, type Route } from "../http/route.ts";

const ConfigState = Type.Union([Type.Literal("current"), Type.Literal("applying"), Type.Literal("failed"), Type.Literal("outdated")]);

export const Rollout = Type.Object(
  {
    id: Type.String(),
    kind: Type.Union([Type.Literal("publish"), Type.Literal("rollback")]),
    commit: Type.String(),
    actor: Type.String(),
    startedAt: Type.String({ format: "date-time" }),
    scope: Type.String({ description: "\"fleet\" or the collector id." }),
    collectorIds: Type.Array(Type.String()),
    changed: Type.Array(Type.String(), { description: "Collectors that got a new config; the others already had this one." }),
  },
  { title: "Rollout" },
);

export const RolloutStatus = Type.Object(
  {
    rolloutId: Type.Union([Type.String(), Type.Null()]),
    commit: Type.Union([Type.String(), Type.Null()]),
    state: Type.Union([Type.Literal("idle"), Type.Literal("running"), Type.Literal("completed"), Type.Literal("completed_with_errors")]),
    total: Type.Integer(),
    counts: Type.Object({
      current: Type.Integer(),
      applying: Type.Integer(),
      failed: Type.Integer(),
      outdated: Type.Integer(),
      offline: Type.Integer({ description: "Counted apart; offline collectors do not block completion." }),
      reporting_only: Type.Integer({
        description: "Counted apart, never blocking completion: connected without the AcceptsRemoteConfig capability, so no config can reach them (run them under the OpAMP supervisor).",
      }),
    }),
    collectors: Type.Array(
      Type.Object({ id: Type.String(), state: Type.Union([ConfigState, Type.Literal("offline"), Type.Literal("reporting_only")]), error: Type.Optional(Type.String()) }),
    ),
  },
  { title: "RolloutStatus" },
);

export const HistoryEntry = Type.Object(
  {
    seq: Type.Integer(),
    commit: Type.String(),
    hash: Type.String(),
    time: Type.String({ format: "date-time" }),
    state: ConfigState,
    actor: Type.String(),
    rollbackOf: Type.Optional(Type.Integer({ description: "The seq of the entry this rollback restored." })),
  },
  { title: "ConfigHistoryEntry" },
);

export const ConfigVersion = Type.Composite([HistoryEntry, Type.Object({ contentType: Type.String(), body: Type.String() })], { title: "ConfigVersion" });

export const EffectiveConfig = Type.Object({
  target: Type.Union([
    Type.Object({ hash: Type.String(), commit: Type.String(), state: Type.String(), error: Type.Union([Type.String(), Type.Null()]), body: Type.String() }),
    Type.Null(),
  ]),
  effective: Type.Union([
    Type.Object({
      reportedAt: Type.String({ format: "date-time" }),
      files: Type.Array(Type.Object({ name: Type.String(), contentType: Type.String(), body: Type.String() })),
    }),
    Type.Null(),
  ]),
});

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
      response: Rollout,
      status: 202,
      handler: ({ principal }) => deps.rollouts.publish(principal),
    }),
    route({
      method: "GET",
      path: "/publish/status",
      scope: "config:read",
      tag: "publish",
      summary: "Progress of the latest publish or rollback: counts by config state and each collector's state.",
      response: RolloutStatus,
      handler: () => deps.rollouts.status(),
    }),
    route({
      method: "POST",
      path: "/publish/{collectorId}",
      scope: "config:publish",
      tag: "publish",
      summary: "Publish the head commit to one collector.",
      response: Rollout,
      status: 202,
      handler: ({ params, principal }) => deps.rollouts.publish(principal, params.collectorId!),
    }),
    route({
      method: "GET",
      path: "/collectors/{id}/config-history",
      scope: "config:read",
      tag: "publish",
      summary: "Every config pushed to this collector, oldest first.",
      response: Type.Object({ items: Type.Array(HistoryEntry) }),
      handler: async ({ params }) => ({ items: await deps.rollouts.history(params.id!) }),
    }),
    route({
      method: "GET",
      path: "/collectors/{id}/config-history/{seq}",
      scope: "config:read",
      tag: "publish",
      summary: "One pushed config with its rendered body, so two versions can be compared.",
      response: ConfigVersion,
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
      response: EffectiveConfig,
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
      response: HistoryEntry,
      status: 202,
      handler: ({ params, principal }) => deps.rollouts.rollback(principal, params.id!),
    }),
  ];
}
