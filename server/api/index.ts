/** The whole REST route table under /api/v1, one file per resource. */
import type { App } from "../app.ts";
import type { Route } from "../http/route.ts";
import { activationRoutes } from "./activations.ts";
import { agentRoutes } from "./agents.ts";
import { auditRoutes } from "./audit.ts";
import { catalogRoutes } from "./catalog.ts";
import { changeRoutes } from "./changes.ts";
import { collectorRoutes } from "./collectors.ts";
import { componentRoutes } from "./components.ts";
import { eventRoutes } from "./events.ts";
import { enrollmentRoutes } from "./enrollment.ts";
import { pipelineRoutes } from "./pipelines.ts";
import { publishRoutes } from "./publish.ts";
import { routeRoutes } from "./routes.ts";
import { serviceAccountRoutes } from "./service-accounts.ts";
import { sessionRoutes } from "./session.ts";
import { systemRoutes } from "./system.ts";
import { throughputRoutes } from "./throughput.ts";
import { userRoutes } from "./users.ts";

export function apiRoutes(app: App): Route[] {
  return [
    ...collectorRoutes(app),
    ...enrollmentRoutes(app),
    ...activationRoutes(app),
    ...componentRoutes(app.sources),
    ...componentRoutes(app.destinations),
    ...pipelineRoutes(app),
    ...routeRoutes(app),
    ...changeRoutes(app),
    ...publishRoutes(app),
    ...catalogRoutes(),
    ...serviceAccountRoutes(app),
    ...sessionRoutes(app),
    ...userRoutes(app),
    ...auditRoutes(app),
    ...systemRoutes(app),
    ...throughputRoutes(app),
    ...eventRoutes(app),
    ...agentRoutes(app),
  ];
}
