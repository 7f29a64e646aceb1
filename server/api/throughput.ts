/**
 * REST: /collectors/{id}/throughput — records/s per component and per route
 * from the collector's own metrics (server/telemetry/). Scope `health:read`:
 * these are operational figures, and a monitoring credential should read them
 * without being able to list the collector registry (`collectors:read`).
 */
import { ThroughputSchema } from "../../shared/throughput.ts";
import type { Collectors } from "../collectors/collectors.ts";
import type { ConfigStore } from "../configstore/configstore.ts";
import type { Rollouts } from "../rollout/rollout.ts";
import type { Telemetry } from "../telemetry/index.ts";
import { route, type Route } from "../http/route.ts";

/** What the /collectors/{id}/throughput routes use. */
export interface ThroughputApiDeps {
  telemetry: Telemetry;
  collectors: Collectors;
  rollouts: Rollouts;
  configStore: ConfigStore;
}

export function throughputRoutes(deps: ThroughputApiDeps): Route[] {
  return [
    route({
      method: "GET",
      path: "/collectors/{id}/throughput",
      scope: "health:read",
      tag: "collectors",
      summary: "Records/s in, out and failed per component and per route, from the collector's own metrics.",
      response: ThroughputSchema,
      handler: ({ params }) => deps.telemetry.throughput(deps, params.id!),
    }),
  ];
}
