/**
 * Names the record each audit entry is about, so the audit page shows
 * "collector “edge-1”" rather than a UUID. One page is named at a time, each
 * kind read at most once per page (the config's working tree, the users, the
 * service accounts; collectors from their in-memory view). A record that is
 * gone is marked deleted and keeps the name its own entry recorded, if any.
 * Ids in an entry's details (an activation's sourceId, a route's pipelineId)
 * are named too, as `refs`.
 */
import type { AuditEntry } from "../../shared/audit.ts";
import type { ServiceAccounts } from "../auth/service-accounts.ts";
import type { Users } from "../auth/users.ts";
import type { Collectors } from "../collectors/collectors.ts";
import type { ConfigStore } from "../configstore/configstore.ts";
import { collectorNamesFrom, recordName } from "../configstore/names.ts";

export interface AuditTargetDeps {
  configStore: Pick<ConfigStore, "worktree">;
  collectors: Pick<Collectors, "get">;
  users: Pick<Users, "list">;
  accounts: Pick<ServiceAccounts, "list">;
}

type Resolver = (id: string) => Promise<string | null>;

/** One resolver per resource type this names, each loading what it reads once. */
function resolvers(deps: AuditTargetDeps): Map<string, Resolver> {
  const once = <T>(load: () => Promise<T>) => {
    let loaded: Promise<T> | undefined;
    return () => (loaded ??= load());
  };
  const tree = once(() => deps.configStore.worktree());
  const users = once(async () => new Map((await deps.users.list()).map((u) => [u.id, u.username])));
  const accounts = once(async () => new Map((await deps.accounts.list()).map((a) => [a.id, a.name])));
  const config =
    (kind: "source" | "destination" | "pipeline" | "route"): Resolver =>
    async (id) =>
      recordName(kind, id, [await tree()]);
  return new Map<string, Resolver>([
    ["collector", collectorNamesFrom(deps.collectors)],
    ["source", config("source")],
    ["destination", config("destination")],
    ["pipeline", config("pipeline")],
    ["route", config("route")],
    ["user", async (id) => (await users()).get(id) ?? null],
    ["service_account", async (id) => (await accounts()).get(id) ?? null],
  ]);
}

/** The details keys that name another record by id, and its kind. */
const DETAIL_REFS = { sourceId: "source", destinationId: "destination", pipelineId: "pipeline", collectorId: "collector" } as const;

/** The entries with `target` set where their resource is a record of a kind this names, and `refs` for ids in their details. */
export async function withTargets(deps: AuditTargetDeps, entries: AuditEntry[]): Promise<AuditEntry[]> {
  const resolve = resolvers(deps);
  const cache = new Map<string, Promise<string | null>>();
  const named = (kind: string, id: string) => {
    const key = `${kind}/${id}`;
    if (!cache.has(key)) cache.set(key, resolve.get(kind)!(id));
    return cache.get(key)!;
  };
  return Promise.all(
    entries.map(async (entry) => {
      const refs = await Promise.all(
        Object.entries(DETAIL_REFS)
          .filter(([key]) => typeof entry.details[key] === "string")
          .map(async ([key, kind]) => ({ key, kind, id: entry.details[key] as string, name: await named(kind, entry.details[key] as string) })),
      );
      const withRefs = refs.length > 0 ? { ...entry, refs } : entry;
      if (!resolve.has(entry.resource) || entry.resourceId === null) return withRefs;
      const name = await named(entry.resource, entry.resourceId);
      if (name !== null) return { ...withRefs, target: { name, deleted: false } };
      const recorded = entry.details.name ?? entry.details.username;
      return { ...withRefs, target: { name: typeof recorded === "string" ? recorded : null, deleted: true } };
    }),
  );
}
