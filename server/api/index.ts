/** The whole REST route table under /api/v1, one file per resource. */
import type { Components } from "../configstore/components.ts";
import type { Route } from "../http/route.ts";
import { activationRoutes, type ActivationsApiDeps } from "./activations.ts";
import { agentRoutes, type AgentsApiDeps } from "./agents.ts";
import { auditRoutes, type AuditApiDeps } from "./audit.ts";
import { catalogRoutes } from "./catalog.ts";
import { changeRoutes, type ChangesApiDeps } from "./changes.ts";
import { collectorRoutes, type CollectorsApiDeps } from "./collectors.ts";
import { dashboardRoutes, type DashboardApiDeps } from "./dashboard.ts";
import { componentRoutes } from "./components.ts";
import { eventRoutes, type EventsApiDeps } from "./events.ts";
import { enrollmentRoutes, type EnrollmentApiDeps } from "./enrollment.ts";
import { pipelineRoutes, type PipelinesApiDeps } from "./pipelines.ts";
import { publishRoutes, type PublishApiDeps } from "./publish.ts";
import { routeRoutes, type RoutesApiDeps } from "./routes.ts";
import { serviceAccountRoutes, type ServiceAccountsApiDeps } from "./service-accounts.ts";
import { sessionRoutes, type SessionApiDeps } from "./session.ts";
import { systemRoutes, type SystemApiDeps } from "./system.ts";
import { throughputRoutes, type ThroughputApiDeps } from "./throughput.ts";
import { trustedAttributeRoutes, type TrustedAttributesApiDeps } from "./trusted-attributes.ts";
import { userRoutes, type UsersApiDeps } from "./users.ts";
import { webhookRoutes, type WebhooksApiDeps } from "./webhooks.ts";

/** Everything the route table uses: each resource module declares its own part. */
export type ApiDeps = ActivationsApiDeps &
  AgentsApiDeps &
  AuditApiDeps &
  ChangesApiDeps &
  CollectorsApiDeps &
  DashboardApiDeps &
  EnrollmentApiDeps &
  EventsApiDeps &
  PipelinesApiDeps &
  PublishApiDeps &
  RoutesApiDeps &
  ServiceAccountsApiDeps &
  SessionApiDeps &
  SystemApiDeps &
  ThroughputApiDeps &
  TrustedAttributesApiDeps &
  UsersApiDeps &
  WebhooksApiDeps & { sources: Components; destinations: Components };

export function apiRoutes(deps: ApiDeps): Route[] {
  return [
    ...collectorRoutes(deps),
    ...enrollmentRoutes(deps),
    ...activationRoutes(deps),
    ...componentRoutes(deps.sources),
    ...componentRoutes(deps.destinations),
    ...pipelineRoutes(deps),
    ...routeRoutes(deps),
    ...changeRoutes(deps),
    ...publishRoutes(deps),
    ...catalogRoutes(),
    ...serviceAccountRoutes(deps),
    ...sessionRoutes(deps),
    ...userRoutes(deps),
    ...auditRoutes(deps),
    ...systemRoutes(deps),
    ...trustedAttributeRoutes(deps),
    ...dashboardRoutes(deps),
    ...throughputRoutes(deps),
    ...eventRoutes(deps),
    ...agentRoutes(deps),
    ...webhookRoutes(deps),
  ];
}
