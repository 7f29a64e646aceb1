/** The whole REST route table under /api/v1, one file per resource. */
import type { App } from "../app.ts";
import type { Route } from "../http/route.ts";
import { auditRoutes } from "./audit.ts";
import { collectorRoutes } from "./collectors.ts";
import { serviceAccountRoutes } from "./service-accounts.ts";
import { systemRoutes } from "./system.ts";

export function apiRoutes(app: App): Route[] {
  return [...collectorRoutes(app), ...serviceAccountRoutes(app), ...auditRoutes(app), ...systemRoutes(app)];
}
