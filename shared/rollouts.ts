/**
 * Rollouts and per-collector config history as the REST API answers them
 * (/publish, /rollouts, /collectors/{id}/config…), declared once for the
 * server's routes, the OpenAPI document and the UI's collector and changes pages.
 */
import { Type, type Static } from "@sinclair/typebox";

const ConfigState = Type.Union([Type.Literal("current"), Type.Literal("applying"), Type.Literal("failed"), Type.Literal("outdated")]);

export const RolloutSchema = Type.Object(
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

export const RolloutStatusSchema = Type.Object(
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

export const HistoryEntrySchema = Type.Object(
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

export const ConfigVersionSchema = Type.Composite([HistoryEntrySchema, Type.Object({ contentType: Type.String(), body: Type.String() })], { title: "ConfigVersion" });

export const EffectiveConfigSchema = Type.Object({
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

export const PublishPlanSchema = Type.Object(
  {
    commit: Type.String({ description: "The head commit a publish would deliver." }),
    changes: Type.Array(
      Type.Object({
        collectorId: Type.String(),
        name: Type.String(),
        from: Type.Union([Type.Object({ hash: Type.String(), commit: Type.String() }), Type.Null()], {
          description: "The config it should run now; null when nothing was published to it yet.",
        }),
        to: Type.Object({ hash: Type.String() }),
        group: Type.Integer({ description: "Index into groups: the diff of this change." }),
      }),
      { description: "Every collector whose config would change, in id order." },
    ),
    groups: Type.Array(
      Type.Object({
        diff: Type.String({ description: "Unified diff of the rendered config, current → published; secrets are shown as their markers." }),
        collectorIds: Type.Array(Type.String()),
      }),
      { description: "The changes grouped by identical diff, in order of first appearance." },
    ),
    unchanged: Type.Integer({ description: "Affected collectors that already run this config." }),
    errors: Type.Array(
      Type.Object({
        collectorId: Type.String(),
        name: Type.String(),
        path: Type.Union([Type.String(), Type.Null()], { description: "What cannot be rendered, as a key path (attributes.<key> for a missing attribute)." }),
        message: Type.String(),
      }),
      { description: "Collectors whose config cannot be rendered; publish refuses while there are any." },
    ),
  },
  { title: "PublishPlan" },
);

export type Rollout = Static<typeof RolloutSchema>;
export type RolloutStatus = Static<typeof RolloutStatusSchema>;
export type HistoryEntry = Static<typeof HistoryEntrySchema>;
export type ConfigVersion = Static<typeof ConfigVersionSchema>;
export type EffectiveConfig = Static<typeof EffectiveConfigSchema>;
export type PublishPlan = Static<typeof PublishPlanSchema>;
