/**
 * What a person types for a collector, source, destination or pipeline — its
 * id or its name — read as the record's id, the same way by every API input
 * that names one. An id always wins, even over another record's name that
 * equals it, so every id keeps working exactly as before; otherwise the text
 * must equal exactly one record's name. None: 404 naming what was looked for.
 * Several (collectors may share names, and so may config records: nothing
 * makes them unique): 409 ambiguous_name, one detail per candidate with its
 * id and name, so the caller can pick one.
 */
import type { Collectors } from "../collectors/collectors.ts";
import type { ConfigStore } from "../configstore/configstore.ts";
import type { Snapshot } from "../configstore/layout.ts";
import { ConflictError, NotFoundError, type ErrorDetail } from "../errors.ts";

export type RefKind = "collector" | "source" | "destination" | "pipeline";

const LABEL: Record<RefKind, string> = { collector: "Collector", source: "Source", destination: "Destination", pipeline: "Pipeline" };

/** A record as a reference can name it. */
interface Named {
  id: string;
  name: string;
}

export class Refs {
  constructor(
    private readonly collectors: Pick<Collectors, "get" | "each">,
    private readonly config: Pick<ConfigStore, "worktree">,
  ) {}

  /** The id `text` names; `path` is where the caller gave it (an error detail's path). */
  async resolve(kind: RefKind, text: string, path: string): Promise<string> {
    return (await this.resolveAll(kind, [text], () => path))[0]!;
  }

  /**
   * The ids these texts name, in order. Collectors' names are looked up in
   * one pass over the fleet for the whole list, however long it is.
   */
  async resolveAll(kind: RefKind, texts: readonly string[], pathOf: (index: number) => string): Promise<string[]> {
    const named = kind === "collector" ? await this.collectorsNamed(texts) : recordsNamed(await this.config.worktree(), kind, texts);
    return texts.map((text, i) => {
      if (named.ids.has(text)) return text;
      const candidates = named.byName.get(text) ?? [];
      if (candidates.length === 1) return candidates[0]!.id;
      if (candidates.length === 0) throw new NotFoundError(LABEL[kind], text);
      throw ambiguous(kind, text, candidates, pathOf(i));
    });
  }

  /** Which texts are collector ids, and the collectors named by the others. */
  private async collectorsNamed(texts: readonly string[]): Promise<Lookup> {
    const ids = new Set<string>();
    for (const text of new Set(texts)) {
      const found = await this.collectors.get(text).then(
        () => true,
        (error: unknown) => (error instanceof NotFoundError ? false : Promise.reject(error)),
      );
      if (found) ids.add(text);
    }
    const wanted = new Set(texts.filter((t) => !ids.has(t)));
    const byName = new Map<string, Named[]>();
    if (wanted.size > 0) {
      await this.collectors.each((c) => {
        if (wanted.has(c.name)) byName.set(c.name, [...(byName.get(c.name) ?? []), { id: c.id, name: c.name }]);
      });
    }
    return { ids, byName };
  }
}

interface Lookup {
  /** The texts that are ids of such a record. */
  ids: ReadonlySet<string>;
  /** The records of each name looked for. */
  byName: ReadonlyMap<string, Named[]>;
}

function recordsNamed(snapshot: Snapshot, kind: Exclude<RefKind, "collector">, texts: readonly string[]): Lookup {
  const records: ReadonlyMap<string, Named> = kind === "source" ? snapshot.sources : kind === "destination" ? snapshot.destinations : snapshot.pipelines;
  const wanted = new Set(texts);
  const byName = new Map<string, Named[]>();
  for (const r of records.values()) if (wanted.has(r.name)) byName.set(r.name, [...(byName.get(r.name) ?? []), { id: r.id, name: r.name }]);
  return { ids: new Set(texts.filter((t) => records.has(t))), byName };
}

function ambiguous(kind: RefKind, text: string, candidates: Named[], path: string): ConflictError {
  const sorted = [...candidates].sort((a, b) => (a.id < b.id ? -1 : 1));
  const details: ErrorDetail[] = sorted.map((c) => ({ path, message: `${kind} "${c.name}" (id ${c.id})`, id: c.id, name: c.name }));
  return new ConflictError(`${sorted.length} ${kind}s are named "${text}"; give the id of the one you mean.`, "ambiguous_name", details);
}
