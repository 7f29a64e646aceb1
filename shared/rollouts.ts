/**
 * Rollouts and per-collector config history as the REST API answers them
 * (/publish, /rollouts, /collectors/{id}/config…), declared once for the
 * server's routes, the OpenAPI document and the UI's collector and changes pages.
 */
import { Type, type Static } from "@sinclair/typebox";

const ConfigState = Type.Union([Type.Literal("current"), Type.Literal("applying"), Type.Literal("failed"), Type.Literal("outdated")]);
/** Where a collector's config stands: `outdated` until sent, `applying` until it reports, then `current` or `failed`. */
export type ConfigState = Static<typeof ConfigState>;

/**
 * Where a collector stands in a rollout: its config state, or, counted apart
 * and never holding a rollout back, offline or reporting only (connected
 * without the means to take remote config); `queued` while a staged rollout
 * has not released its batch yet, or the publish's writes have not reached it yet.
 */
const RolloutCollectorState = Type.Union([ConfigState, Type.Literal("offline"), Type.Literal("reporting_only"), Type.Literal("queued")]);
export type RolloutCollectorState = Static<typeof RolloutCollectorState>;

export const StrategySchema = Type.Object(
  {
    batchSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, description: "Collectors per batch after the canary." })),
    batchPercent: Type.Optional(
      Type.Number({ exclusiveMinimum: 0, maximum: 100, description: "Or a share of the changed collectors per batch (rounded up, at least one)." }),
    ),
    pauseSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 86_400, description: "Wait after a batch has applied before the next one (default 0)." })),
    failureThreshold: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 100,
        description: "Percent of a batch's reachable collectors that may fail before the rollout pauses itself (default 0: any failure pauses).",
      }),
    ),
    canary: Type.Optional(
      Type.Object(
        {
          collectorIds: Type.Optional(
            Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: 10_000, description: "Each a collector's id or name." }),
          ),
          match: Type.Optional(Type.Array(Type.String({ maxLength: 1024 }), { minItems: 1, maxItems: 32, description: "Alertmanager matchers." })),
        },
        { additionalProperties: false, description: "The first batch: these collectors (those of them the publish changes)." },
      ),
    ),
  },
  { additionalProperties: false, title: "RolloutStrategy" },
);

/** How a staged rollout releases its batches, as stored: sizes resolved, defaults applied. */
export const StoredStrategySchema = Type.Object({
  batchSize: Type.Optional(Type.Integer()),
  batchPercent: Type.Optional(Type.Number()),
  pauseSeconds: Type.Integer(),
  failureThreshold: Type.Number(),
});

const Phase = Type.Union([Type.Literal("running"), Type.Literal("paused"), Type.Literal("aborted"), Type.Literal("done")], {
  description: "A staged rollout's own phase: running (releasing batches), paused (by an operator or by failures), aborted, or done (every batch released).",
});

/**
 * A collector a rollout left on the config it runs, and why: its config
 * cannot be rendered (a reported attribute its config references is missing
 * or bad, an Alloy collector matched to a pipeline it cannot run...). One
 * entry per collector, whatever the reason; the plan lists the same ones.
 */
export const SkippedCollectorSchema = Type.Object(
  {
    collectorId: Type.String(),
    name: Type.String(),
    path: Type.Union([Type.String(), Type.Null()], { description: "What cannot be rendered, as a key path (attributes.<key> for a missing attribute)." }),
    message: Type.String({ description: "Why it was skipped." }),
  },
  { title: "SkippedCollector" },
);

/** Data a source type delivers otherwise on Runtime R than on Runtime O, which svc cannot normalise (server/catalog/sources/delivery.ts). */
export const RuntimeDifferenceSchema = Type.Object(
  {
    sourceType: Type.String(),
    difference: Type.String({ description: "What each runtime delivers for it, as the parity table (docs/runtime-parity.md) says." }),
  },
  { title: "RuntimeDifference" },
);
export type RuntimeDifference = Static<typeof RuntimeDifferenceSchema>;

/** A rollout's collectors counted by where they stand. */
const RolloutCountsSchema = Type.Object({
  current: Type.Integer(),
  applying: Type.Integer(),
  failed: Type.Integer(),
  outdated: Type.Integer(),
  offline: Type.Integer({ description: "Counted apart; offline collectors do not block completion." }),
  reporting_only: Type.Integer({
    description:
      "Counted apart, never blocking completion: connected without the AcceptsRemoteConfig capability, so no config can reach them (run them under the OpAMP supervisor).",
  }),
  queued: Type.Integer({ description: "In a staged rollout's batches not released yet, or not reached yet by the publish's writes." }),
});

/** What became of a publish its server stopped writing part way (rollout/publish-writes.ts). */
const InterruptedSchema = Type.Object(
  {
    at: Type.String({ format: "date-time", description: "When it was found interrupted and recorded so." }),
    planned: Type.Integer({ description: "Collectors it was to change." }),
    written: Type.Integer({ description: "Collectors it gave their target before it stopped: exactly those in `changed`." }),
  },
  {
    description:
      "Set when the server writing this publish stopped part way (a crash, a lost database): `changed` and `collectorIds` hold what it wrote; the other planned collectors kept what they run until a later publish.",
  },
);

export const RolloutSchema = Type.Object(
  {
    id: Type.String(),
    kind: Type.Union([Type.Literal("publish"), Type.Literal("rollback"), Type.Literal("attributes")], {
      description:
        "publish; rollback; or attributes: who runs what changed (an edit of tags or environment, a collector joining or reporting a trusted attribute), each affected collector rendered again at the commit it is on.",
    }),
    commit: Type.String(),
    actor: Type.String(),
    startedAt: Type.String({ format: "date-time" }),
    scope: Type.String({ description: '"fleet", the collector id, or "collectors" (several named or edited collectors).' }),
    collectorIds: Type.Array(Type.String()),
    changed: Type.Array(Type.String(), {
      description: "Collectors that get a new config (the others already had this one); in a staged rollout, in release order.",
    }),
    skipped: Type.Optional(
      Type.Array(SkippedCollectorSchema, {
        description:
          "Collectors left on their config because theirs could not be rendered, each with the reason (a fleet publish skips them; one naming them refuses unless skipErrors), or because their build lacks a component it uses (path `components`; the plan's lacking).",
      }),
    ),
    pinned: Type.Optional(Type.Array(Type.String(), { description: "Collectors left on the config a rollback pinned them to." })),
    strategy: Type.Optional(StoredStrategySchema),
    batchEnds: Type.Optional(Type.Array(Type.Integer(), { description: "Staged: where each batch ends in `changed` (exclusive)." })),
    released: Type.Optional(Type.Integer({ description: "Staged: index of the last batch released." })),
    phase: Type.Optional(Phase),
    pausedReason: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    settledAt: Type.Optional(
      Type.Union([Type.String({ format: "date-time" }), Type.Null()], { description: "Staged: when the released batch stopped applying." }),
    ),
    acceptedThrough: Type.Optional(Type.Integer({ description: "Staged: failures in batches up to this index were accepted by a resume." })),
    interrupted: Type.Optional(InterruptedSchema),
    resumedBy: Type.Optional(
      Type.String({
        description: "Set on an interrupted publish when a later publish took over the collectors it moved (they count in that one's `changed`).",
      }),
    ),
    resumes: Type.Optional(
      Type.Array(Type.Object({ rolloutId: Type.String(), collectors: Type.Integer() }), {
        description:
          "Interrupted publishes whose targets this publish found already at the config it renders: those collectors lead `changed` (counted as changed by this publish) and were not written again.",
      }),
    ),
    ended: Type.Optional(
      Type.Object(
        {
          at: Type.String({ format: "date-time" }),
          outcome: Type.Union([Type.Literal("completed"), Type.Literal("completed_with_errors"), Type.Literal("aborted"), Type.Literal("not_recorded")], {
            description: "not_recorded: it ended before this server recorded ends (state from an older version); its counts are zero.",
          }),
          counts: RolloutCountsSchema,
          handedOn: Type.Optional(
            Type.Integer({
              description: "Collectors given a later rollout's config before this one ended: their state says nothing of this one, so they are not in counts.",
            }),
          ),
        },
        {
          description:
            "Set once, when the rollout ended: every collector it targets applied or failed its config, or is offline or reporting only (a staged rollout: after its last batch), or it was aborted; with the counts then.",
        },
      ),
    ),
  },
  { title: "Rollout" },
);

export const RolloutSummarySchema = Type.Composite(
  [
    Type.Omit(RolloutSchema, ["collectorIds", "changed", "skipped", "pinned"]),
    Type.Object({ collectors: Type.Integer(), changed: Type.Integer(), skipped: Type.Integer(), pinned: Type.Integer() }),
  ],
  { title: "RolloutSummary" },
);

export const RolloutStatusSchema = Type.Object(
  {
    rolloutId: Type.Union([Type.String(), Type.Null()]),
    commit: Type.Union([Type.String(), Type.Null()]),
    state: Type.Union([
      Type.Literal("idle"),
      Type.Literal("running"),
      Type.Literal("paused"),
      Type.Literal("aborted"),
      Type.Literal("completed"),
      Type.Literal("completed_with_errors"),
    ]),
    total: Type.Integer(),
    counts: RolloutCountsSchema,
    collectors: Type.Array(Type.Object({ id: Type.String(), state: RolloutCollectorState, error: Type.Optional(Type.String()) })),
    batches: Type.Optional(
      Type.Array(
        Type.Object({
          size: Type.Integer(),
          released: Type.Boolean(),
          counts: Type.Record(Type.String(), Type.Integer(), { description: "By rollout state, as `counts`." }),
        }),
        { description: "Staged rollouts: each batch in release order." },
      ),
    ),
    pausedReason: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    skipped: Type.Array(SkippedCollectorSchema, { description: "Collectors the rollout left on their config, with the reason." }),
    eta: Type.Optional(
      Type.Union([Type.String({ format: "date-time" }), Type.Null()], { description: "Staged: when the last batch should be released, at the pace so far." }),
    ),
    handedOn: Type.Optional(
      Type.Integer({
        description: "Collectors a later rollout gave another config: their state says nothing of this one, so they are not in counts or collectors.",
      }),
    ),
    interrupted: Type.Optional(InterruptedSchema),
  },
  { title: "RolloutStatus" },
);

export const HistoryEntrySchema = Type.Object(
  {
    seq: Type.Integer(),
    commit: Type.String(),
    hash: Type.String(),
    time: Type.String({ format: "date-time" }),
    state: Type.Union([ConfigState, Type.Literal("superseded"), Type.Literal("rolled_back"), Type.Literal("rolled_back_by_collector")], {
      description:
        "The latest entry: where it stands. An earlier one: failed, rolled_back (an operator restored an older config after it), rolled_back_by_collector (the collector went back on its own after it failed), or superseded.",
    }),
    actor: Type.String(),
    rollbackOf: Type.Optional(Type.Integer({ description: "The seq of the entry this rollback restored." })),
    cause: Type.Optional(
      Type.Union([Type.Literal("publish"), Type.Literal("rollback"), Type.Literal("attributes")], {
        description:
          "Why it was recorded: a publish, a rollback, or the collector's attributes changed (rendered again at the commit it is on, actor system). Absent on old entries: publish, or rollback when rollbackOf is set.",
      }),
    ),
    error: Type.Optional(Type.String({ description: "The collector's message when it failed this config." })),
    collectorRolledBackTo: Type.Optional(Type.Integer({ description: "The seq the collector went back to after failing this one." })),
    rolloutId: Type.Optional(Type.String({ description: "The rollout that recorded it (absent on entries recorded before issue 34)." })),
    applied: Type.Optional(Type.Boolean({ description: "Whether the collector applied this config (a rollback goes back to the last other one it applied)." })),
  },
  { title: "ConfigHistoryEntry" },
);

export const RenderFailureSchema = Type.Object(
  {
    commit: Type.String(),
    error: Type.String({ description: "What could not be rendered (a missing attribute names its key and the config path that needs it)." }),
    at: Type.String({ format: "date-time" }),
    rolloutId: Type.Optional(
      Type.String({ description: "The rollout that skipped the collector for it, when a rollout did (a publish or an attribute change)." }),
    ),
  },
  {
    title: "RenderFailure",
    description:
      "The collector's config at the commit it is on (or the commit a publish delivered) cannot be rendered, so it keeps its target: found by a publish, which skipped it, or after its attributes changed. Cleared by the next good render of it.",
  },
);

export const ConfigVersionSchema = Type.Composite([HistoryEntrySchema, Type.Object({ contentType: Type.String(), body: Type.String() })], {
  title: "ConfigVersion",
});

export const EffectiveConfigSchema = Type.Object({
  target: Type.Union([
    Type.Object({
      hash: Type.String(),
      commit: Type.String(),
      state: Type.String(),
      error: Type.Union([Type.String(), Type.Null()]),
      body: Type.String(),
      pinned: Type.Optional(Type.Object({ at: Type.String({ format: "date-time" }), actor: Type.String() }, { description: "Pinned by a rollback." })),
      drift: Type.Optional(
        Type.Object(
          {
            drifted: Type.Boolean(),
            diff: Type.Union([Type.String(), Type.Null()], { description: "Unified diff, target → what the collector runs, cut to the target's keys." }),
            reason: Type.Optional(Type.String({ description: "The differing paths, or why drift cannot be told." })),
            targetHash: Type.String(),
            checkedAt: Type.String({ format: "date-time" }),
          },
          { description: "The last comparison of the collector's effective config with this target." },
        ),
      ),
      collectorRollback: Type.Optional(
        Type.Object(
          { toSeq: Type.Union([Type.Integer(), Type.Null()]), toHash: Type.String(), at: Type.String({ format: "date-time" }) },
          { description: "The collector went back to an earlier config after this one failed; not offered again until a retry or a new target." },
        ),
      ),
    }),
    Type.Null(),
  ]),
  effective: Type.Union([
    Type.Object({
      reportedAt: Type.String({ format: "date-time" }),
      files: Type.Array(Type.Object({ name: Type.String(), contentType: Type.String(), body: Type.String() })),
      refused: Type.Optional(
        Type.Object(
          { at: Type.String({ format: "date-time" }), reason: Type.String() },
          { description: "The collector's last report was not kept (over the size svc keeps); files are the last ones kept." },
        ),
      ),
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
    pinned: Type.Array(Type.Object({ collectorId: Type.String(), name: Type.String(), since: Type.String({ format: "date-time" }), by: Type.String() }), {
      description: "Collectors a rollback pinned: skipped unless named in collectorIds (or unpinned).",
    }),
    errors: Type.Array(SkippedCollectorSchema, {
      description:
        "Collectors whose config cannot be rendered: a fleet publish (or an attribute change) skips them, each keeping the config it runs; a publish naming them in collectorIds refuses unless skipErrors.",
    }),
    lacking: Type.Array(
      Type.Object({
        collectorId: Type.String(),
        name: Type.String(),
        missing: Type.Array(Type.String(), {
          description: "Component types the new config uses that the collector's build lacks, as kind/type (receiver/kafka).",
        }),
      }),
      {
        description:
          "Collectors whose build (the available components their OpAMP supervisor reports) lacks a component their new config uses: publish skips them (they keep what they run; listed in the rollout's skipped).",
      },
    ),
    differences: Type.Array(Type.Intersect([RuntimeDifferenceSchema, Type.Object({ collectorIds: Type.Array(Type.String()) })]), {
      description:
        "Warnings: source types for which the changed Alloy collectors would deliver other data than OpenTelemetry Collectors (OpAMP) (metric names, body, attributes), with those collectors; svc cannot normalise these.",
    }),
  },
  { title: "PublishPlan" },
);

export type Rollout = Static<typeof RolloutSchema>;
export type RolloutStatus = Static<typeof RolloutStatusSchema>;
export type RolloutEnd = NonNullable<Rollout["ended"]>;
export type RolloutSummary = Static<typeof RolloutSummarySchema>;
export type Strategy = Static<typeof StrategySchema>;
export type StoredStrategy = Static<typeof StoredStrategySchema>;
export type RolloutPhase = Static<typeof Phase>;
export type HistoryEntry = Static<typeof HistoryEntrySchema>;
export type RenderFailure = Static<typeof RenderFailureSchema>;
export type ConfigVersion = Static<typeof ConfigVersionSchema>;
export type EffectiveConfig = Static<typeof EffectiveConfigSchema>;
export type PublishPlan = Static<typeof PublishPlanSchema>;
export type SkippedCollector = Static<typeof SkippedCollectorSchema>;

/** GET /rollouts: a page of rollouts, newest first. */
export const RolloutPageSchema = Type.Object({ items: Type.Array(RolloutSummarySchema), nextCursor: Type.Union([Type.String(), Type.Null()]) });

/** POST /rollouts/{id}/abort: the aborted rollout and the collectors rolled back. */
export const AbortAnswerSchema = Type.Object({ rollout: RolloutSchema, rolledBack: Type.Array(Type.String()) });
export type AbortAnswer = Static<typeof AbortAnswerSchema>;

/** GET /collectors/drifted: collectors whose effective config differs from their applied target. */
export const DriftedAnswerSchema = Type.Object({
  items: Type.Array(
    Type.Object({
      collectorId: Type.String(),
      name: Type.String(),
      reason: Type.Union([Type.String(), Type.Null()]),
      checkedAt: Type.String({ format: "date-time" }),
    }),
  ),
});
export type DriftedAnswer = Static<typeof DriftedAnswerSchema>;

/** GET /collectors/{id}/config-history: every config pushed, and why the config cannot be rendered while that stands. */
export const ConfigHistoryAnswerSchema = Type.Object({ items: Type.Array(HistoryEntrySchema), renderFailure: Type.Union([RenderFailureSchema, Type.Null()]) });
export type ConfigHistoryAnswer = Static<typeof ConfigHistoryAnswerSchema>;
