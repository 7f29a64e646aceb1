/**
 * REST: /collectors/{id}/throughput — records/s per component and per route
 * from the collector's own metrics (server/telemetry/). Scope `health:read`:
 * these are operational figures, and a monitoring credential should read them
 * without being able to list the collector registry (`collectors:read`).
 */
import { Type } from "@sinclair/typebox";
import type { Collectors } from "../collectors/collectors.ts";
import type { ConfigStore } from "../configstore/configstore.ts";
import type { Rollouts } from "../rollout/rollout.ts";
import type { Telemetry } from "../telemetry/index.ts";
import { route, type Route } from "../http/route.ts";
import { Nullable } from "../../shared/schema.ts";

const Rate = Nullable(Type.Number({ description: "Per second; null when the collector reports nothing that measures it." }));
const Signal = Type.Union([Type.Literal("logs"), Type.Literal("metrics"), Type.Literal("traces")]);

export const Throughput = Type.Object(
  {
    window: Type.Number({ description: "Seconds the rates cover (up to about 5 minutes); 0 until two reports arrived." }),
    lastReportAt: Nullable(Type.String({ format: "date-time", description: "When this server last received the collector's metrics." })),
    components: Type.Array(
      Type.Object({
        id: Type.String({ description: "Component id in the rendered config, e.g. otlp/app or filter/logs_app_drop." }),
        kind: Type.Union([Type.Literal("receiver"), Type.Literal("processor"), Type.Literal("exporter")]),
        signal: Signal,
        in: Rate,
        out: Rate,
        errors: Rate,
      }),
    ),
    routes: Type.Array(Type.Object({ routeId: Type.String(), in: Rate, out: Rate })),
    process: Type.Object({
      cpu: Nullable(Type.Number({ description: "CPU seconds per second." })),
      memoryRss: Nullable(Type.Number({ description: "Bytes." })),
      uptime: Nullable(Type.Number({ description: "Seconds." })),
    }),
  },
  { title: "Throughput" },
);

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
      response: Throughput,
      handler: ({ params }) => deps.telemetry.throughput(deps, params.id!),
    }),
  ];
}
