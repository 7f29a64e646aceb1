/** REST: /system — control-plane health for operators (load balancers use /healthz and /readyz). */
import { statfs } from "node:fs/promises";
import { dirname } from "node:path";
import { VERSION } from "../version.ts";
import type { Channel } from "../channel/channel.ts";
import { COLLECTOR_STATUSES } from "../../shared/collector-status.ts";
import type { Collectors } from "../collectors/collectors.ts";
import type { ServerConfig } from "../config/load.ts";
import type { Store } from "../store/store.ts";
import { collectorUrl } from "../enrollment/bootstrap.ts";
import { agentPackagesProblem } from "../enrollment/downloads.ts";
import { route, type Route } from "../http/route.ts";
import { HealthSchema as Health } from "../../shared/system.ts";

/** What the /system routes use. */
export interface SystemApiDeps {
  config: ServerConfig;
  store: Store;
  collectors: Collectors;
  channels: Channel[];
  startedAt: Date;
}

/** Storage status without throwing: health must answer even when storage cannot. */
export async function storageStatus(deps: { store: Store }): Promise<{ status: "up" | "down"; error?: string }> {
  try {
    await deps.store.ping();
    return { status: "up" };
  } catch (error) {
    return { status: "down", error: (error as Error).message };
  }
}

/** Below this much free space the embedded store's disk counts as full: writes there are about to fail. */
const FULL_BELOW_BYTES = 1024 * 1024;

/**
 * For the embedded store, why its disk cannot take writes (null when it can):
 * one statfs call, so health can say so while reads still work and /readyz,
 * which only asks whether storage answers, stays ready.
 */
async function embeddedDiskProblem(deps: SystemApiDeps): Promise<string | null> {
  if (deps.store.backend !== "embedded") return null;
  try {
    const { bavail, bsize } = await statfs(dirname(deps.config.storage.boltPath));
    if (bavail * bsize >= FULL_BELOW_BYTES) return null;
    return `The disk holding the state file has ${bavail * bsize} bytes free: writes are refused (507 storage_full) until space is freed.`;
  } catch {
    return null; // not measurable here (e.g. :memory:): the writes themselves will say
  }
}

/** Whether the install snippets can work, from the same checks the snippet routes make before they mint. */
async function onboarding(deps: SystemApiDeps) {
  const readiness = (problem: string | null) => ({ ready: problem === null, problem });
  let urlProblem: string | null = null;
  try {
    collectorUrl(deps.config.externalUrl);
  } catch (error) {
    urlProblem = (error as Error).message;
  }
  return {
    externalUrlSource: deps.config.externalUrl === "" ? ("unset" as const) : deps.config.externalUrlFromListen ? ("listen" as const) : ("config" as const),
    collectorSnippet: readiness(urlProblem),
    agentPackages: readiness(await agentPackagesProblem(deps.config.downloads.dir)),
  };
}

export function systemRoutes(deps: SystemApiDeps): Route[] {
  return [
    route({
      method: "GET",
      path: "/system/health",
      scope: "health:read",
      tag: "system",
      summary:
        "Overall control-plane health: storage, version, uptime, collectors by status, each channel's state. While storage is down a credential cannot be checked, so it answers without checking it, with `storage.status: down` and the reason. When the embedded store's disk is full it answers `degraded` with `storage.status: up` (reads work) and `storage.error` saying writes are refused.",
      response: Health,
      answersWithoutStorage: true,
      handler: async () => {
        const [storage, diskProblem] = await Promise.all([storageStatus(deps), embeddedDiskProblem(deps)]);
        if (storage.status === "up" && diskProblem !== null) storage.error = diskProblem;
        const collectors = storage.status === "up" ? await deps.collectors.countByStatus() : Object.fromEntries(COLLECTOR_STATUSES.map((s) => [s, 0]));
        return {
          status: storage.status === "up" && diskProblem === null ? "ok" : "degraded",
          version: VERSION,
          uptimeSeconds: Math.round((Date.now() - deps.startedAt.getTime()) / 1000),
          startedAt: deps.startedAt.toISOString(),
          externalUrl: deps.config.externalUrl === "" ? null : deps.config.externalUrl,
          onboarding: await onboarding(deps),
          storage: { backend: deps.store.backend, ...storage },
          collectors,
          channels: Object.fromEntries(deps.channels.map((c) => [c.name, c.health()])),
        };
      },
    }),
  ];
}
