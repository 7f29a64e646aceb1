/**
 * What the REST API answers about host agents (GET /api/v1/agents and
 * /agents/{id}), declared once for the server's routes, its OpenAPI document
 * and the UI's Hosts pages.
 */
import { Type, type Static } from "@sinclair/typebox";
import { BrowseSummarySchema, DiscoveryReportSchema, HostFactsSchema } from "./agent-protocol.ts";
import { AGENT_STATUSES } from "./agent-status.ts";
import { DateTime, NextCursor, Nullable } from "./schema.ts";

export const AgentStatusSchema = Type.Union(
  AGENT_STATUSES.map((s) => Type.Literal(s)),
  { errorMessage: `must be one of ${AGENT_STATUSES.join(", ")}` },
);

export const AgentSchema = Type.Object(
  {
    id: Type.String({ description: "The agent's stable id (agent.id, or derived from the host's machine id)." }),
    name: Type.String({ description: "Host name from its last hello." }),
    environment: Type.String(),
    version: Nullable(Type.String()),
    tokenId: Type.String({ description: "The enrollment token it is bound to." }),
    reenroll: Type.Boolean({
      description: "An operator allowed the next connection with a usable agent token to enroll this id afresh (POST /agents/{id}/re-enroll).",
    }),
    status: AgentStatusSchema,
    connected: Type.Boolean({ description: "Whether it holds a session with this server replica (browse calls need one)." }),
    enrolledAt: DateTime,
    connectedAt: Nullable(DateTime),
    lastSeen: Nullable(DateTime),
    host: Nullable(HostFactsSchema),
    browse: Nullable(BrowseSummarySchema),
    discovery: Nullable(DiscoveryReportSchema),
    discoveredAt: Nullable(DateTime),
  },
  { title: "Agent" },
);
export type Agent = Static<typeof AgentSchema>;

export const AgentPageSchema = Type.Object({ items: Type.Array(AgentSchema), nextCursor: NextCursor });
export type AgentPage = Static<typeof AgentPageSchema>;
/** A minted install snippet for host agents (POST /agents/snippet). */
export const AgentSnippetSchema = Type.Object({ snippet: Type.String(), enrollmentTokenId: Type.String(), expiresAt: DateTime });
export type AgentSnippet = Static<typeof AgentSnippetSchema>;
/** The answers of POST /agents/{id}/re-enroll and /rescan: what was asked of the agent. */
export const ReenrollAnswerSchema = Type.Object({ reenroll: Type.Boolean() });
export const RescanAnswerSchema = Type.Object({ requested: Type.Boolean() });
export type ReenrollAnswer = Static<typeof ReenrollAnswerSchema>;
export type RescanAnswer = Static<typeof RescanAnswerSchema>;
