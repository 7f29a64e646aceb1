/**
 * Names for what the config repository's files hold, so pending changes,
 * commit diffs and error messages say "source “nginx logs”" rather than a
 * UUID. A file's record is found by its path alone (ids are file names); its
 * name comes from the first snapshot that still has it, so a deleted record
 * is named from the version before the deletion. Collectors live outside the
 * repository: their names come from a lookup the caller passes.
 */
import type { FileChange, FileRecord, RecordKind } from "../../shared/changes.ts";
import type { RouteRecord } from "../../shared/config-records.ts";
import type { Collectors } from "../collectors/collectors.ts";
import { NotFoundError } from "../errors.ts";
import { recordAt, type Snapshot } from "./layout.ts";

/** A collector's name by id; null when it is gone. */
export type CollectorNames = (id: string) => Promise<string | null>;

/** The name of a config record in the first snapshot holding it (a route: "source → pipeline"). */
export function recordName(kind: Exclude<RecordKind, "collector">, id: string, snapshots: readonly Snapshot[]): string | null {
  const find = <T>(pick: (s: Snapshot) => Map<string, T>, key: string) => snapshots.map((s) => pick(s).get(key)).find((r) => r !== undefined);
  if (kind === "source") return find((s) => s.sources, id)?.name ?? null;
  if (kind === "destination") return find((s) => s.destinations, id)?.name ?? null;
  if (kind === "pipeline") return find((s) => s.pipelines, id)?.name ?? null;
  // A route is named as of the version holding it (a deleted route by the names it had), else the newest.
  const at = snapshots.findIndex((s) => s.routes.has(id));
  if (at < 0) return null;
  const route = snapshots[at]!.routes.get(id)!;
  const order = [snapshots[at]!, ...snapshots.filter((_, i) => i !== at)];
  const source = order.map((s) => s.sources.get(route.sourceId)).find((r) => r !== undefined)?.name ?? route.sourceId;
  const pipeline = order.map((s) => s.pipelines.get(route.pipelineId)).find((r) => r !== undefined)?.name ?? route.pipelineId;
  return `${source} → ${pipeline}`;
}

/** Each file change with the record it holds, named from `snapshots` (newest first) and `collectors`. */
export async function nameFiles(items: FileChange[], snapshots: readonly Snapshot[], collectors: CollectorNames): Promise<FileChange[]> {
  const collectorNames = new Map<string, Promise<string | null>>();
  return Promise.all(
    items.map(async (item) => {
      const at = recordAt(item.path);
      if (!at) return item;
      let name: string | null;
      if (at.kind === "collector") {
        if (!collectorNames.has(at.id)) collectorNames.set(at.id, collectors(at.id));
        name = await collectorNames.get(at.id)!;
      } else {
        name = recordName(at.kind, at.id, snapshots);
      }
      const record: FileRecord = { ...at, name };
      return { ...item, record };
    }),
  );
}

/** Collector names from the registry (null for a deleted collector). */
export function collectorNamesFrom(collectors: Pick<Collectors, "get">): CollectorNames {
  return (id) =>
    collectors.get(id).then(
      (collector) => collector.name,
      (error: unknown) => (error instanceof NotFoundError ? null : Promise.reject(error)),
    );
}

/** The names of these collectors, each looked up once. */
export async function collectorNameMap(ids: Iterable<string>, lookup: CollectorNames | null): Promise<Map<string, string | null>> {
  const unique = [...new Set(ids)];
  const names = lookup ? await Promise.all(unique.map(lookup)) : unique.map(() => null);
  return new Map(unique.map((id, i) => [id, names[i]!]));
}

/** `collector "edge-1"` for error messages, or the bare id when its name is unknown. */
export function collectorLabel(id: string, names: ReadonlyMap<string, string | null>): string {
  const name = names.get(id);
  return name ? `collector "${name}"` : `collector ${id}`;
}

/** `route "nginx logs → main"` for error messages. */
export function routeTitle(route: RouteRecord, snapshot: Snapshot): string {
  return `route "${recordName("route", route.id, [snapshot]) ?? route.id}"`;
}

/** `route "nginx logs → main" on collector "edge-1"` for error messages. */
export function routeLabel(route: RouteRecord, snapshot: Snapshot, collectors: ReadonlyMap<string, string | null>): string {
  return `${routeTitle(route, snapshot)} on ${collectorLabel(route.collectorId, collectors)}`;
}
