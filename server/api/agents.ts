/**
 * REST: /agents — the host registry, and log browsing relayed to a connected
 * agent over its channel. The agent enforces its own browse rules (roots,
 * deny patterns, limits); the server adds the scope check and audits every
 * relayed call (browse, sample, rescan), answered or refused, with the path asked for.
 */
import { type Static, type TSchema, Type } from "@sinclair/typebox";
import type { AgentChannel } from "../agents/channel.ts";
import type { AgentRecord, Agents } from "../agents/registry.ts";
import type { Actor } from "../audit/audit.ts";
import type { ServerConfig } from "../config/load.ts";
import type { Enrollment } from "../enrollment/enrollment.ts";
import { BrowseListingSchema, BrowseSampleSchema, RescanResultSchema } from "../../shared/agent-protocol.ts";
import {
  AgentPageSchema,
  AgentSchema as Agent,
  AgentSnippetSchema,
  AgentStatusSchema as Status,
  ReenrollAnswerSchema,
  RescanAnswerSchema,
} from "../../shared/agents.ts";
import { AppError, ValidationError } from "../errors.ts";
import { collectorUrl, installSnippet } from "../enrollment/bootstrap.ts";
import { route, type Route } from "../http/route.ts";
import { validate } from "../lib/validate.ts";
import { decodeCursor, encodeCursor, PageQuery } from "../http/schemas.ts";

const Path = Type.String({ minLength: 1, maxLength: 4096, description: "An absolute path on the agent's host." });

const ListQuery = Type.Object(
  { ...PageQuery, status: Type.Optional(Status), q: Type.Optional(Type.String({ maxLength: 200, description: "Text in id, name or environment." })) },
  { additionalProperties: false },
);

const SampleQuery = Type.Object(
  {
    path: Path,
    mode: Type.Optional(Type.Union([Type.Literal("lines"), Type.Literal("bytes")], { default: "lines", errorMessage: "must be lines or bytes" })),
    from: Type.Optional(Type.Union([Type.Literal("head"), Type.Literal("tail")], { default: "tail", errorMessage: "must be head or tail" })),
  },
  { additionalProperties: false },
);

/** What the /agents routes use. */
export interface AgentsApiDeps {
  agents: Agents;
  agentChannel: AgentChannel;
  enrollment: Enrollment;
  config: ServerConfig;
}

export function agentRoutes(deps: AgentsApiDeps): Route[] {
  // The credential's digest stays in the store; legacy records read reenroll false.
  const view = ({ credentialHash: _, ...record }: AgentRecord) => ({
    ...record,
    reenroll: record.reenroll ?? false,
    connected: deps.agentChannel.isConnected(record.id),
  });

  /**
   * Relays one request to the agent and audits it, whatever the answer. An answer
   * that does not fit `answer` is the agent's fault (502), never passed on as is.
   */
  async function relay<T extends TSchema>(
    who: Actor,
    agentId: string,
    action: string,
    details: Record<string, unknown>,
    body: Parameters<typeof deps.agentChannel.request>[1],
    answer: T,
  ): Promise<Static<T>> {
    await deps.agents.get(agentId);
    try {
      const result = checkAnswer(agentId, answer, await deps.agentChannel.request(agentId, body));
      await deps.agents.relayed(who, agentId, action, details);
      return result;
    } catch (error) {
      const code = error instanceof AppError ? error.code : "internal";
      await deps.agents.relayed(who, agentId, action, details, code);
      throw error;
    }
  }

  return [
    route({
      method: "GET",
      path: "/agents",
      scope: "agents:read",
      tag: "agents",
      summary: "List host agents with status and host facts; filter by ?status= and ?q=; cursor-paginated.",
      query: ListQuery,
      response: AgentPageSchema,
      handler: async ({ query }) => {
        const { limit = 100, cursor, ...filter } = query;
        const page = await deps.agents.list(filter, limit, decodeCursor(cursor));
        return { items: page.items.map(view), nextCursor: page.nextCursor === null ? null : encodeCursor(page.nextCursor) };
      },
    }),
    route({
      method: "POST",
      path: "/agents/snippet",
      scope: "agents:write",
      tag: "agents",
      summary:
        "A shell one-liner that installs svc-agent on a host and enrolls it, with a fresh agent token (?maxUses= hosts may use it, default 1; ?environment= labels them). 409 external_url_missing without externalUrl.",
      query: Type.Object(
        {
          environment: Type.Optional(Type.String({ maxLength: 200 })),
          maxUses: Type.Optional(Type.Integer({ minimum: 1, maximum: 100000, default: 1, description: "Hosts that may enroll with the snippet's token." })),
        },
        { additionalProperties: false },
      ),
      response: AgentSnippetSchema,
      status: 201,
      handler: async ({ query, principal }) => {
        const url = collectorUrl(deps.config.externalUrl);
        const { token, enrollmentToken } = await deps.enrollment.create(principal, {
          kind: "agent",
          environment: query.environment,
          maxUses: query.maxUses ?? 1,
        });
        return { snippet: installSnippet(url, { agentToken: token }), enrollmentTokenId: enrollmentToken.id, expiresAt: enrollmentToken.expiresAt };
      },
    }),
    route({
      method: "GET",
      path: "/agents/{id}",
      scope: "agents:read",
      tag: "agents",
      summary: "One agent: host facts, and what it discovered (services with suggested pipelines, collectors, log sources).",
      response: Agent,
      handler: async ({ params }) => view(await deps.agents.get(params.id!)),
    }),
    route({
      method: "DELETE",
      path: "/agents/{id}",
      scope: "agents:write",
      tag: "agents",
      summary: "Forget a host. A connected agent is disconnected; it enrolls again if its token still allows it, so revoke the token to keep it out.",
      status: 204,
      handler: async ({ params, principal }) => {
        await deps.agents.remove(principal, params.id!);
        deps.agentChannel.disconnect(params.id!);
      },
    }),
    route({
      method: "POST",
      path: "/agents/{id}/re-enroll",
      scope: "agents:write",
      tag: "agents",
      summary:
        "Allow the next connection of this agent id with a usable agent token to enroll it afresh with a new credential (the host lost its own, or was rebuilt); until then a connection without the id's credential is refused. Audited.",
      status: 202,
      response: ReenrollAnswerSchema,
      handler: async ({ params, principal }) => {
        await deps.agents.allowReenroll(principal, params.id!);
        return { reenroll: true };
      },
    }),
    route({
      method: "POST",
      path: "/agents/{id}/rescan",
      scope: "agents:write",
      tag: "agents",
      summary: "Ask the agent to run discovery now; the new report replaces the old one when it arrives.",
      status: 202,
      response: RescanAnswerSchema,
      handler: async ({ params, principal }) => {
        await relay(principal, params.id!, "agent.rescan", {}, { type: "discovery.rescan" }, RescanResultSchema);
        return { requested: true };
      },
    }),
    route({
      method: "GET",
      path: "/agents/{id}/browse",
      scope: "agents:browse",
      tag: "agents",
      summary:
        "List a directory on the agent's host, within its browse rules (allowedRoots, denyPatterns, maxDirEntries). 403 browse_disabled when the agent's config turns browsing off; 409 agent_offline; 504 agent_timeout.",
      query: Type.Object({ path: Path }, { additionalProperties: false }),
      response: BrowseListingSchema,
      handler: ({ params, query, principal }) =>
        relay(principal, params.id!, "agent.browse.list", { path: query.path }, { type: "browse.list", path: query.path }, BrowseListingSchema),
    }),
    route({
      method: "GET",
      path: "/agents/{id}/sample",
      scope: "agents:browse",
      tag: "agents",
      summary:
        "Sample a file on the agent's host: up to browse.maxSampleLines lines or browse.maxSampleBytes bytes from its head or tail (default lines, tail). Never reads the whole file.",
      query: SampleQuery,
      response: BrowseSampleSchema,
      handler: ({ params, query, principal }) => {
        const mode = query.mode ?? "lines";
        const from = query.from ?? "tail";
        const request = { type: "browse.sample", path: query.path, mode, from } as const;
        return relay(principal, params.id!, "agent.browse.sample", { path: query.path, mode, from }, request, BrowseSampleSchema);
      },
    }),
  ];
}

/** The agent's answer as its schema describes it; anything else is a bad gateway answer. */
function checkAnswer<T extends TSchema>(agentId: string, schema: T, answer: unknown): Static<T> {
  try {
    return validate(schema, answer, "answer");
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    throw new AppError(502, "agent_bad_answer", `Agent '${agentId}' sent a malformed answer: ${error.message}`, error.details);
  }
}
