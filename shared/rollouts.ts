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
    cause: Type.Optional(
      Type.Union([Type.Literal("publish"), Type.Literal("rollback"), Type.Literal("attributes")], {
        description: "Why it was recorded: a publish, a rollback, or the collector's attributes changed (rendered again at the commit it is on, actor system). Absent on old entries: publish, or rollback when rollbackOf is set.",
      }),
    ),
  },
  { title: "ConfigHistoryEntry" },
);

export const RenderFailureSchema = Type.Object(
  {
    commit: Type.String(),
    error: Type.String({ description: "What could not be rendered (a missing attribute names its key and the config path that needs it)." }),
    at: Type.String({ format: "date-time" }),
  },
  {
    title: "RenderFailure",
    description: "The collector's attributes changed and its config at the commit it is on cannot be rendered; it keeps its target. Cleared by the next good render or a publish.",
  },
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

export type Rollout = Static<typeof RolloutSchema>;
export type RolloutStatus = Static<typeof RolloutStatusSchema>;
export type HistoryEntry = Static<typeof HistoryEntrySchema>;
export type RenderFailure = Static<typeof RenderFailureSchema>;
export type ConfigVersion = Static<typeof ConfigVersionSchema>;
export type EffectiveConfig = Static<typeof EffectiveConfigSchema>;
