/**
 * REST: /collectors/{id}/throughput — records/s per component, route and
 * pipeline flow from the collector's own metrics (server/telemetry/), and
 * …/throughput/history — the last hour of them in 15 s buckets. Scope `health:read`:
 * these are operational figures, and a monitoring credential should read them
 * without being able to list the collector registry (`collectors:read`).
 */
import { ThroughputHistorySchema, ThroughputSchema } from "../../shared/throughput.ts";
import type { Collectors } from "../collectors/collectors.ts";
import type { ConfigStore } from "../configstore/configstore.ts";
import type { Delivery } from "../rollout/delivery.ts";
import type { Telemetry } from "../telemetry/index.ts";
import { route, type Route } from "../http/route.ts";

/** What the /collectors/{id}/throughput routes use. */
export interface ThroughputApiDeps {
  telemetry: Telemetry;
  collectors: Collectors;
  delivery: Pick<Delivery, "target">;
  configStore: ConfigStore;
}

export function throughputRoutes(deps: ThroughputApiDeps): Route[] {
  return [
    route({
      method: "GET",
      path: "/collectors/{id}/throughput",
      scope: "health:read",
      tag: "collectors",
      summary: "Records/s in, out and failed per component, per route and per pipeline flow, from the collector's own metrics.",
      response: ThroughputSchema,
      handler: ({ params }) => deps.telemetry.throughput(deps, params.id!),
    }),
    route({
      method: "GET",
      path: "/collectors/{id}/throughput/history",
      scope: "health:read",
      tag: "collectors",
      summary: "The last hour in 15 s buckets: records/s in and out and errors/s per signal, process CPU and memory.",
      response: ThroughputHistorySchema,
      handler: ({ params }) => deps.telemetry.history(deps, params.id!),
    }),
  ];
}
