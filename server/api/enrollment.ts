/**
 * REST: enrolling collectors. /enrollment-tokens manages the tokens a new
 * collector or agent first presents; the /collectors/... routes hand out what
 * goes on a collector host (install snippet, bootstrap files, its own token).
 * Every route here that answers a collector's credential (its own token, or an
 * opamp enrollment token, which enrolls as or creates a collector) needs
 * collectors:enroll: the holder of such a credential receives that
 * collector's config with its secrets filled in, so minting one is for those
 * trusted with secrets, not for every collectors:write caller. Agent tokens
 * and POST /bootstrap-files, which mints nothing, need less.
 */
import { type Static, Type } from "@sinclair/typebox";
import { type Collector, ManagementModeSchema } from "../../shared/collectors.ts";
import {
  BootstrapFilesSchema as BootstrapFiles,
  CollectorTokenSchema as CollectorToken,
  CreatedEnrollmentTokenSchema,
  EnrollmentKindSchema as Kind,
  EnrollmentTokenPageSchema,
  MintedBootstrapFilesSchema,
  RuntimeNameSchema as RuntimeName,
  SnippetAnswerSchema as SnippetAnswer,
} from "../../shared/enrollment.ts";
import { RUNTIME_NAMES, RUNTIME_OF, type Runtime } from "../../shared/vocabulary.ts";
import type { Principal } from "../auth/service-accounts.ts";
import { tokenKind } from "../auth/tokens.ts";
import type { Collectors } from "../collectors/collectors.ts";
import type { CollectorTokens } from "../collectors/tokens.ts";
import type { ServerConfig } from "../config/load.ts";
import { bootstrapFiles, collectorUrl, installSnippet } from "../enrollment/bootstrap.ts";
import { type Enrollment, MAX_EXPIRES_IN } from "../enrollment/enrollment.ts";
import { COLLECTORS_DIR, hasCollectorMirror } from "../enrollment/downloads.ts";
import { ConflictError, ValidationError } from "../errors.ts";
import { route, type Route } from "../http/route.ts";
import type { Refs } from "../refs/refs.ts";
import { decodeCursor, encodeCursor, PageQuery } from "../http/schemas.ts";
import { Nullable } from "../../shared/schema.ts";

const CreateBody = Type.Object(
  {
    kind: Kind,
    collectorId: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: "opamp only: enroll as this existing collector, by id or name." })),
    environment: Type.Optional(Type.String({ maxLength: 200 })),
    expiresIn: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_EXPIRES_IN, description: "Seconds; default 86400 (opamp) or 604800 (agent); at most 365 days." }),
    ),
    maxUses: Type.Optional(
      Nullable(Type.Integer({ minimum: 1, description: "agent only (opamp is always 1); default 1; null is unlimited, e.g. for a DaemonSet." })),
    ),
  },
  { additionalProperties: false },
);

const SnippetQuery = Type.Object(
  {
    managementMode: Type.Optional(ManagementModeSchema),
    environment: Type.Optional(Type.String({ maxLength: 200, description: "Label for the collector an opamp token creates; not with collectorId." })),
    collectorId: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: "An existing collector, by id or name." })),
    agent: Type.Optional(Type.Boolean({ default: false, description: "Also install svc-agent on the host, enrolled with a fresh single-use agent token." })),
  },
  { additionalProperties: false },
);

const BootstrapFilesBody = Type.Object(
  {
    token: Type.String({ minLength: 1, maxLength: 512, description: "An opamp enrollment token, or an rcfg-remotecfg collector's own token." }),
    runtime: Type.Optional(RuntimeName),
  },
  { additionalProperties: false },
);

/** Files for another runtime than the collector's mode would leave it talking to a channel that does not serve it. */
function modeMismatch(collector: Collector, asked: string): ConflictError {
  return new ConflictError(
    `Collector '${collector.id}' has managementMode ${collector.managementMode}, which does not match ${asked}; change it with PATCH /collectors/${collector.id} first.`,
    "management_mode_mismatch",
  );
}

/** What the enrollment-token, install-snippet and bootstrap-file routes use. */
export interface EnrollmentApiDeps {
  enrollment: Enrollment;
  collectors: Collectors;
  collectorTokens: CollectorTokens;
  metricsTokens: Pick<CollectorTokens, "mint">;
  config: ServerConfig;
  refs: Pick<Refs, "resolve">;
}

/**
 * The runtime whose bootstrap files a token renders, as /v1/bootstrap decides
 * it: a live opamp enrollment token → otelcol, a current collector token →
 * alloy (with its collector's id). Anything else is a bad `token` field.
 */
async function runtimeOfToken(deps: EnrollmentApiDeps, token: string): Promise<{ runtime: Runtime; collectorId: string }> {
  if (tokenKind(token) === "enrollment" && (await deps.enrollment.usableForOpamp(token))) return { runtime: "otelcol", collectorId: "" };
  const collectorId = await deps.collectorTokens.verify(token);
  if (collectorId !== null) return { runtime: "alloy", collectorId };
  throw new ValidationError("The token is neither a live opamp enrollment token nor a current collector token, so it has no bootstrap files.", [
    { path: "token", message: "is not a live opamp enrollment token or a current collector token (agent tokens install svc-agent instead)" },
  ]);
}

/**
 * The collector install one-liner, minting the tokens it carries: an opamp
 * enrollment token, or for rcfg-remotecfg the collector's own (revoking the
 * previous one), and with agent an agent token.
 */
async function collectorSnippet(deps: EnrollmentApiDeps, query: Static<typeof SnippetQuery>, principal: Principal): Promise<Static<typeof SnippetAnswer>> {
  const url = collectorUrl(deps.config.externalUrl);
  // Hosts take the collector packages from this server when it mirrors them.
  const packageBaseUrl = hasCollectorMirror(deps.config.downloads.dir) ? `${url.origin}/downloads/${COLLECTORS_DIR}` : undefined;
  // The agent's own token, when the snippet installs the agent too.
  const agentToken = (environment: string | null | undefined) =>
    query.agent ? deps.enrollment.create(principal, { kind: "agent", environment: environment ?? undefined }) : Promise.resolve(null);
  const collector =
    query.collectorId === undefined ? undefined : await deps.collectors.get(await deps.refs.resolve("collector", query.collectorId, "collectorId"));
  if (collector && query.environment !== undefined) {
    throw new ValidationError("The collector already has its environment; leave environment out or change the collector.", [
      { path: "environment", message: "cannot be combined with collectorId" },
    ]);
  }
  const mode = collector?.managementMode ?? query.managementMode ?? "opamp";
  if (collector && query.managementMode !== undefined && query.managementMode !== mode) {
    throw modeMismatch(collector, `managementMode ${query.managementMode}`);
  }
  if (mode === "rcfg-remotecfg") {
    if (!collector) {
      throw new ValidationError(
        `An ${RUNTIME_NAMES.alloy} collector authenticates with its own token, so the snippet needs it: create it with POST /collectors and pass its id.`,
        [{ path: "collectorId", message: "is required for managementMode rcfg-remotecfg" }],
      );
    }
    const { token } = await deps.collectorTokens.mint(principal, collector.id);
    const agent = await agentToken(collector.environment);
    const snippet = installSnippet(url, { agentToken: agent?.token, collector: { mode, token, collectorId: collector.id }, packageBaseUrl });
    return { snippet, enrollmentTokenId: null, expiresAt: null, agentEnrollmentTokenId: agent?.enrollmentToken.id ?? null };
  }
  const { token, enrollmentToken } = await deps.enrollment.create(principal, {
    kind: "opamp",
    collectorId: collector?.id,
    environment: query.environment,
  });
  const agent = await agentToken(collector?.environment ?? query.environment);
  return {
    snippet: installSnippet(url, { agentToken: agent?.token, collector: { mode, token }, packageBaseUrl }),
    enrollmentTokenId: enrollmentToken.id,
    expiresAt: enrollmentToken.expiresAt,
    agentEnrollmentTokenId: agent?.enrollmentToken.id ?? null,
  };
}

export function enrollmentRoutes(deps: EnrollmentApiDeps): Route[] {
  return [
    route({
      method: "POST",
      path: "/enrollment-tokens",
      scope: "tokens:write",
      tag: "enrollment",
      summary:
        "Mint an enrollment token (opamp: single-use, binds to the first instance, and needs collectors:enroll too; agent: up to maxUses); the token is in this answer only.",
      body: CreateBody,
      response: CreatedEnrollmentTokenSchema,
      status: 201,
      handler: async ({ body, principal, requireScope }) => {
        // An opamp token is a collector's credential: its holder is sent that collector's config, secrets and all.
        if (body.kind === "opamp") await requireScope("collectors:enroll");
        const collectorId = body.collectorId === undefined ? undefined : await deps.refs.resolve("collector", body.collectorId, "collectorId");
        const { token, enrollmentToken } = await deps.enrollment.create(principal, { ...body, collectorId });
        return { ...enrollmentToken, token };
      },
    }),
    route({
      method: "GET",
      path: "/enrollment-tokens",
      scope: "tokens:read",
      tag: "enrollment",
      summary:
        "List enrollment tokens, oldest first, with their uses, binding (the instance_uid to tokens:write holders only), expiry and revocation (never the tokens); cursor-paginated. Tokens expired or revoked over 30 days ago are pruned.",
      query: Type.Object(PageQuery, { additionalProperties: false }),
      response: EnrollmentTokenPageSchema,
      handler: async ({ query, principal }) => {
        const page = await deps.enrollment.list(query.limit ?? 100, decodeCursor(query.cursor));
        // An instance_uid is how OpAMP names a live collector: shown only to those who may mint and revoke tokens.
        const items = principal.scopes.has("tokens:write") ? page.items : page.items.map((t) => ({ ...t, boundInstanceUid: null }));
        return { items, nextCursor: page.nextCursor === null ? null : encodeCursor(page.nextCursor) };
      },
    }),
    route({
      method: "DELETE",
      path: "/enrollment-tokens/{id}",
      scope: "tokens:write",
      tag: "enrollment",
      summary: "Revoke an enrollment token; it stops working at once and stays listed with revokedAt.",
      status: 204,
      handler: ({ params, principal }) => deps.enrollment.revoke(principal, params.id!),
    }),
    route({
      method: "POST",
      path: "/collectors/{id}/otlp-token",
      scope: "collectors:enroll",
      tag: "enrollment",
      summary:
        "Mint the collector's own token (Bearer for remote config, /v1/bootstrap and /v1/metrics). The previous token stops working in the same write: put the new one in an Alloy (remote config) collector's config straight away. An OpAMP collector that takes OpAMP connection settings is sent it as one; its own-metrics push carries its metrics credential instead (POST /collectors/{id}/metrics-token), which this leaves as it is, so the collector is not restarted.",
      response: CollectorToken,
      status: 201,
      handler: ({ params, principal }) => deps.collectorTokens.mint(principal, params.id!),
    }),
    route({
      method: "POST",
      path: "/collectors/{id}/metrics-token",
      scope: "collectors:enroll",
      tag: "enrollment",
      summary:
        "Mint the collector's metrics credential (svccm_: accepted by /v1/metrics for this collector and nowhere else), which the OpAMP own-metrics offer carries. The previous one stops working in the same write; connected OpAMP collectors are offered the new one, and the OpAMP supervisor restarts its collector once to put it in the collector's config. Rotating the collector's token (otlp-token) does not touch it.",
      response: CollectorToken,
      status: 201,
      handler: ({ params, principal }) => deps.metricsTokens.mint(principal, params.id!),
    }),
    route({
      method: "POST",
      path: "/collectors/snippet",
      scope: "collectors:enroll",
      tag: "enrollment",
      summary:
        "Mints and answers a shell one-liner (curl {externalUrl}/downloads/install.sh | sudo sh) that enrolls a collector, and with ?agent=true installs svc-agent too. opamp (default): mints a single-use enrollment token, pre-bound to ?collectorId= when given. rcfg-remotecfg: needs ?collectorId= and mints that collector's own token, which revokes its previous one.",
      query: SnippetQuery,
      response: SnippetAnswer,
      status: 201,
      handler: ({ query, principal }) => collectorSnippet(deps, query, principal),
    }),
    route({
      method: "GET",
      path: "/collectors/snippet",
      scope: "collectors:enroll",
      tag: "enrollment",
      summary: "As POST /collectors/snippet (it mints the same tokens), kept for existing clients: with the session cookie it needs X-CSRF-Token like a write.",
      query: SnippetQuery,
      response: SnippetAnswer,
      csrf: true,
      handler: ({ query, principal }) => collectorSnippet(deps, query, principal),
    }),
    route({
      method: "POST",
      path: "/bootstrap-files",
      scope: "collectors:write",
      tag: "enrollment",
      summary:
        "The bootstrap files for a token the caller already holds, sent in the body so it stays out of URLs and access logs. An opamp enrollment token gives the OpenTelemetry Collector (OpAMP) collector and supervisor configs (otelcol); an rcfg-remotecfg collector's own token gives the Alloy (remote config) file (alloy). Nothing is minted or redeemed. With runtime, a token for the other runtime is refused.",
      body: BootstrapFilesBody,
      response: BootstrapFiles,
      handler: async ({ body }) => {
        const url = collectorUrl(deps.config.externalUrl);
        const { runtime, collectorId } = await runtimeOfToken(deps, body.token);
        if (body.runtime !== undefined && body.runtime !== runtime) {
          throw new ValidationError(`This token renders ${runtime} files, not ${body.runtime}.`, [
            { path: "token", message: `is for the ${runtime} runtime, not ${body.runtime}` },
          ]);
        }
        return { runtime, files: bootstrapFiles(runtime, url, collectorId, body.token) };
      },
    }),
    route({
      method: "POST",
      path: "/collectors/bootstrap",
      scope: "collectors:enroll",
      tag: "enrollment",
      summary:
        "The OpenTelemetry Collector (OpAMP) bootstrap files (otelcol) for a new collector, with a fresh single-use opamp enrollment token (?environment= labels the collector it creates). The public URL is checked first: a refused call (409 external_url_missing or external_url_insecure) mints nothing.",
      query: Type.Object({ environment: Type.Optional(Type.String({ maxLength: 200 })) }, { additionalProperties: false }),
      response: MintedBootstrapFilesSchema,
      status: 201,
      handler: async ({ query, principal }) => {
        const url = collectorUrl(deps.config.externalUrl);
        const { token, enrollmentToken } = await deps.enrollment.create(principal, { kind: "opamp", environment: query.environment });
        return {
          runtime: "otelcol" as const,
          files: bootstrapFiles("otelcol", url, "", token),
          enrollmentTokenId: enrollmentToken.id,
          expiresAt: enrollmentToken.expiresAt,
        };
      },
    }),
    route({
      method: "POST",
      path: "/collectors/{id}/bootstrap",
      scope: "collectors:enroll",
      tag: "enrollment",
      summary:
        "The collector's bootstrap files (a POST: it mints a token); {id} is the collector's id or name. otelcol (opamp collectors): collector and OpAMP supervisor config with a fresh single-use enrollment token bound to this collector. alloy (rcfg-remotecfg): the remotecfg file with a freshly minted collector token, which revokes its previous one.",
      query: Type.Object({ runtime: Type.Optional(RuntimeName) }, { additionalProperties: false }),
      response: BootstrapFiles,
      status: 201,
      handler: async ({ params, query, principal }) => {
        const url = collectorUrl(deps.config.externalUrl);
        const collector = await deps.collectors.get(await deps.refs.resolve("collector", params.id!, "id"));
        const runtime = RUNTIME_OF[collector.managementMode];
        if (query.runtime !== undefined && query.runtime !== runtime) throw modeMismatch(collector, `runtime ${query.runtime}`);
        const token =
          runtime === "alloy"
            ? (await deps.collectorTokens.mint(principal, collector.id)).token
            : (await deps.enrollment.create(principal, { kind: "opamp", collectorId: collector.id })).token;
        return { runtime, files: bootstrapFiles(runtime, url, collector.id, token) };
      },
    }),
  ];
}
