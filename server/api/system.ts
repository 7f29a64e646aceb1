/** REST: /system — control-plane health for operators (load balancers use /healthz and /readyz). */
import { Type } from "@sinclair/typebox";
import { VERSION, type App } from "../app.ts";
import { COLLECTOR_STATUSES } from "../collectors/collectors.ts";
import { route, type Route } from "../http/route.ts";

const Health = Type.Object(
  {
    status: Type.Union([Type.Literal("ok"), Type.Literal("degraded")]),
    version: Type.String(),
    uptimeSeconds: Type.Number(),
    startedAt: Type.String({ format: "date-time" }),
    externalUrl: Type.Union([Type.String(), Type.Null()]),
    storage: Type.Object({
      backend: Type.String(),
      status: Type.Union([Type.Literal("up"), Type.Literal("down")]),
      error: Type.Optional(Type.String()),
    }),
    collectors: Type.Record(Type.Union(COLLECTOR_STATUSES.map((s) => Type.Literal(s))), Type.Integer()),
    channels: Type.Record(
      Type.String(),
      Type.Object({
        state: Type.Union([Type.Literal("up"), Type.Literal("degraded"), Type.Literal("down")]),
        connections: Type.Optional(Type.Integer()),
      }),
      { description: "Each collector channel by name (opamp, remotecfg, metrics, agent)." },
    ),
  },
  { title: "Health" },
);

/** Storage status without throwing: health must answer even when storage cannot. */
export async function storageStatus(app: App): Promise<{ status: "up" | "down"; error?: string }> {
  try {
    await app.store.ping();
    return { status: "up" };
  } catch (error) {
    return { status: "down", error: (error as Error).message };
  }
}

export function systemRoutes(app: App): Route[] {
  return [
    route({
      method: "GET",
      path: "/system/health",
      scope: "health:read",
      tag: "system",
      summary:
        "Overall control-plane health: storage, version, uptime, collectors by status, each channel's state. While storage is down a credential cannot be checked, so it answers without checking it, with `storage.status: down` and the reason.",
      response: Health,
      answersWithoutStorage: true,
      handler: async () => {
        const storage = await storageStatus(app);
        const collectors =
          storage.status === "up"
            ? await app.collectors.countByStatus()
            : Object.fromEntries(COLLECTOR_STATUSES.map((s) => [s, 0]));
        return {
          status: storage.status === "up" ? "ok" : "degraded",
          version: VERSION,
          uptimeSeconds: Math.round((Date.now() - app.startedAt.getTime()) / 1000),
          startedAt: app.startedAt.toISOString(),
          externalUrl: app.config.externalUrl === "" ? null : app.config.externalUrl,
          storage: { backend: app.store.backend, ...storage },
          collectors,
          channels: Object.fromEntries(app.channels.map((c) => [c.name, c.health()])),
        };
      },
    }),
  ];
}
