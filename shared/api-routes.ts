/**
 * The REST routes the browser UI calls, each as "METHOD /path" (relative to
 * /api/v1, `{name}` parameters) with the schema of its answer: the UI's typed
 * client (server/ui/client.ts) takes its paths and answer types from here,
 * and server/api/contract.test.ts holds every entry to the server's route of
 * that method and path, answer schema by identity, so neither can drift.
 * A route without `response` answers 204 or with nothing the UI reads. The
 * UI imports this module with `import type` only (no TypeBox in the bundle).
 */
import type { TSchema } from "@sinclair/typebox";
import { BrowseListingSchema, BrowseSampleSchema } from "./agent-protocol.ts";
import { AgentPageSchema, AgentSchema, AgentSnippetSchema } from "./agents.ts";
import { AuditPageSchema } from "./audit.ts";
import { CatalogViewSchema, ProcessorTemplatesSchema } from "./catalog.ts";
import { CommitDiffSchema, CommitMadeSchema, CommitPageSchema, FileChangeListSchema, PendingChangesSchema } from "./changes.ts";
import { CollectorPageSchema } from "./collector-page.ts";
import {
  CollectorDetailSchema,
  CollectorSchema,
  EditPlanAnswerSchema,
  MatchersPreviewSchema,
  RestartRequestSchema,
  TagEditAnswerSchema,
  TagEditPlanSchema,
} from "./collectors.ts";
import {
  ComponentListSchema,
  ComponentSchema,
  DestinationActivationListSchema,
  DestinationActivationSchema,
  RouteListSchema,
  RouteWrittenSchema,
  SourceActivationListSchema,
  SourceActivationSchema,
} from "./config-answers.ts";
import { DashboardSchema } from "./dashboard.ts";
import { BootstrapFilesSchema, CollectorTokenSchema, EnrollmentTokenPageSchema, MintedBootstrapFilesSchema, SnippetAnswerSchema } from "./enrollment.ts";
import {
  AppliedPipelinesSchema,
  DryRunAnswerSchema,
  PipelineAnswer,
  PipelineListAnswer,
  PipelinePreviewSchema,
  PipelineRatesSchema,
  TopologyAnswer,
} from "./pipelines.ts";
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
} from "./rollouts.ts";
import { CreatedServiceAccountSchema, ScopesAnswerSchema, ServiceAccountListSchema } from "./service-accounts.ts";
import { HealthSchema, TrustedListSchema } from "./system.ts";
import { ThroughputHistorySchema, ThroughputSchema } from "./throughput.ts";
import { InviteAnswerSchema, ResetAnswerSchema, SessionSchema, SessionStatusAnswer, UserListSchema, UserSchema } from "./users.ts";
import { WebhookDeliveryListSchema, WebhookListSchema, WebhookSchema } from "./webhooks.ts";

/** One route as the UI sees it: what it answers. */
export interface RouteContract {
  response?: TSchema;
}

export const API_ROUTES = {
  "GET /agents": { response: AgentPageSchema },
  "POST /agents/snippet": { response: AgentSnippetSchema },
  "GET /agents/{id}": { response: AgentSchema },
  "GET /agents/{id}/browse": { response: BrowseListingSchema },
  "GET /agents/{id}/sample": { response: BrowseSampleSchema },
  "GET /audit": { response: AuditPageSchema },

  "GET /catalog": { response: CatalogViewSchema },
  "GET /processor-templates": { response: ProcessorTemplatesSchema },

  "GET /changes": { response: PendingChangesSchema },
  "POST /changes/discard": { response: FileChangeListSchema },
  "POST /commit": { response: CommitMadeSchema },
  "GET /commits": { response: CommitPageSchema },
  "GET /commits/{commit}": { response: CommitDiffSchema },
  "GET /commits/export": {},
  "GET /events": {},

  "GET /collectors": { response: CollectorPageSchema },
  "POST /collectors": { response: CollectorSchema },
  "GET /collectors/{id}": { response: CollectorDetailSchema },
  "PATCH /collectors/{id}": { response: CollectorSchema },
  "DELETE /collectors/{id}": {},
  "POST /collectors/{id}/edit-plan": { response: EditPlanAnswerSchema },
  "POST /collectors/{id}/restart": { response: RestartRequestSchema },
  "POST /collectors/tags": { response: TagEditAnswerSchema },
  "POST /collectors/tags/plan": { response: TagEditPlanSchema },
  "POST /matchers/preview": { response: MatchersPreviewSchema },
  "GET /collectors/drifted": { response: DriftedAnswerSchema },
  "GET /collectors/{id}/config-history": { response: ConfigHistoryAnswerSchema },
  "GET /collectors/{id}/config-history/{seq}": { response: ConfigVersionSchema },
  "GET /collectors/{id}/effective-config": { response: EffectiveConfigSchema },
  "POST /collectors/{id}/rollback": { response: HistoryEntrySchema },
  "DELETE /collectors/{id}/pin": {},
  "POST /collectors/{id}/retry": {},
  "GET /collectors/{id}/pipelines": { response: AppliedPipelinesSchema },
  "GET /collectors/{id}/throughput": { response: ThroughputSchema },
  "GET /collectors/{id}/throughput/history": { response: ThroughputHistorySchema },
  "GET /collectors/{id}/sources": { response: SourceActivationListSchema },
  "POST /collectors/{id}/sources": { response: SourceActivationSchema },
  "DELETE /collectors/{id}/sources/{sourceId}": {},
  "GET /collectors/{id}/destinations": { response: DestinationActivationListSchema },
  "POST /collectors/{id}/destinations": { response: DestinationActivationSchema },
  "DELETE /collectors/{id}/destinations/{destinationId}": {},
  "POST /collectors/{id}/otlp-token": { response: CollectorTokenSchema },
  "POST /collectors/snippet": { response: SnippetAnswerSchema },
  "POST /collectors/bootstrap": { response: MintedBootstrapFilesSchema },
  "POST /collectors/{id}/bootstrap": { response: BootstrapFilesSchema },
  "POST /bootstrap-files": { response: BootstrapFilesSchema },
  "GET /enrollment-tokens": { response: EnrollmentTokenPageSchema },
  "DELETE /enrollment-tokens/{id}": {},

  "GET /dashboard": { response: DashboardSchema },
  "GET /system/health": { response: HealthSchema },
  "GET /system/trusted-attributes": { response: TrustedListSchema },
  "PUT /system/trusted-attributes": { response: TrustedListSchema },

  "GET /sources": { response: ComponentListSchema },
  "POST /sources": { response: ComponentSchema },
  "PUT /sources/{id}": { response: ComponentSchema },
  "DELETE /sources/{id}": {},
  "GET /destinations": { response: ComponentListSchema },
  "POST /destinations": { response: ComponentSchema },
  "PUT /destinations/{id}": { response: ComponentSchema },
  "DELETE /destinations/{id}": {},

  "GET /pipelines": { response: PipelineListAnswer },
  "POST /pipelines": { response: PipelineAnswer },
  "GET /pipelines/{id}": { response: PipelineAnswer },
  "PUT /pipelines/{id}": { response: PipelineAnswer },
  "DELETE /pipelines/{id}": {},
  "PUT /pipelines/{id}/topology": { response: TopologyAnswer },
  "POST /pipelines/{id}/topology/preview": { response: PipelinePreviewSchema },
  "GET /pipelines/{id}/rates": { response: PipelineRatesSchema },
  "POST /pipelines/{id}/dry-run": { response: DryRunAnswerSchema },

  "GET /routes": { response: RouteListSchema },
  "POST /routes": { response: RouteWrittenSchema },
  "PUT /routes/{id}": { response: RouteWrittenSchema },
  "DELETE /routes/{id}": {},

  "POST /publish": { response: RolloutSchema },
  "POST /publish/plan": { response: PublishPlanSchema },
  "GET /publish/status": { response: RolloutStatusSchema },
  "GET /rollouts": { response: RolloutPageSchema },
  "POST /rollouts/{id}/pause": { response: RolloutSchema },
  "POST /rollouts/{id}/resume": { response: RolloutSchema },
  "POST /rollouts/{id}/abort": { response: AbortAnswerSchema },

  "GET /scopes": { response: ScopesAnswerSchema },
  "GET /service-accounts": { response: ServiceAccountListSchema },
  "POST /service-accounts": { response: CreatedServiceAccountSchema },
  "DELETE /service-accounts/{id}": {},

  "POST /session": { response: SessionSchema },
  "GET /session/status": { response: SessionStatusAnswer },
  "DELETE /session": {},
  "POST /session/invite": { response: SessionSchema },
  "POST /session/password-reset": { response: SessionSchema },

  "GET /users": { response: UserListSchema },
  "POST /users": { response: InviteAnswerSchema },
  "PATCH /users/{id}": { response: UserSchema },
  "DELETE /users/{id}": {},
  "POST /users/{id}/password-reset": { response: ResetAnswerSchema },

  "GET /webhooks": { response: WebhookListSchema },
  "POST /webhooks": { response: WebhookSchema },
  "DELETE /webhooks/{id}": {},
  "GET /webhooks/{id}/deliveries": { response: WebhookDeliveryListSchema },
} satisfies Record<string, RouteContract>;

export type ApiRoutes = typeof API_ROUTES;
