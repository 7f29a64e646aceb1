/**
 * The answers of /system (server/api/system.ts: control-plane health, and what
 * onboarding needs) and /system/trusted-attributes, declared once for the
 * server's routes, the OpenAPI document and the UI.
 */
import { Type, type Static } from "@sinclair/typebox";
import { COLLECTOR_STATUSES } from "./collector-status.ts";

export const ReadinessSchema = Type.Object({
  ready: Type.Boolean(),
  problem: Type.Union([Type.String(), Type.Null()], { description: "Why not, and how to fix it; null when ready." }),
});

export const HealthSchema = Type.Object(
  {
    status: Type.Union([Type.Literal("ok"), Type.Literal("degraded")]),
    version: Type.String(),
    uptimeSeconds: Type.Number(),
    startedAt: Type.String({ format: "date-time" }),
    externalUrl: Type.Union([Type.String(), Type.Null()]),
    onboarding: Type.Object(
      {
        externalUrlSource: Type.Union([Type.Literal("config"), Type.Literal("listen"), Type.Literal("unset")], {
          description:
            "config: externalUrl is configured; listen: the quick-start uses the URL it serves (this host only); unset: collectors cannot be given a URL.",
        }),
        collectorSnippet: ReadinessSchema,
        agentPackages: ReadinessSchema,
      },
      { description: "What onboarding needs: a URL for collectors (snippets and bootstrap files) and, to install svc-agent, its packages in downloads.dir." },
    ),
    storage: Type.Object({
      backend: Type.String(),
      status: Type.Union([Type.Literal("up"), Type.Literal("down")]),
      error: Type.Optional(Type.String()),
    }),
    collectors: Type.Record(Type.Union(COLLECTOR_STATUSES.map((s) => Type.Literal(s))), Type.Integer()),
    channels: Type.Record(
      Type.String(),
      Type.Object({
        state: Type.Union([Type.Literal("up"), Type.Literal("degraded"), Type.Literal("down")]),
        connections: Type.Optional(Type.Integer()),
      }),
      { description: "Each collector channel by name (opamp, remotecfg, metrics, agent)." },
    ),
  },
  { title: "Health" },
);
export type Readiness = Static<typeof ReadinessSchema>;
export type Health = Static<typeof HealthSchema>;
export type OnboardingReadiness = Health["onboarding"];

export const TrustedListSchema = Type.Object(
  {
    configured: Type.Array(Type.String(), { description: "fleet.trustedAttributes in the server configuration: changed there only." }),
    listed: Type.Array(Type.String(), { description: "The System page's list, what PUT sets." }),
    trusted: Type.Array(Type.String(), { description: "Both: the reported keys matchers may read." }),
  },
  { title: "TrustedAttributes" },
);
export type TrustedList = Static<typeof TrustedListSchema>;
