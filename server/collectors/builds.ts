/**
 * What a collector's build holds: the component types its OpAMP supervisor
 * reports (AgentToServer.available_components, from the collector's OpAMP
 * extension: receivers, processors, exporters, extensions, connectors), kept
 * in `available_components/<collectorId>`. A config that uses a type the
 * build lacks would not start (the collector refuses unknown types at
 * load), so publish and its plan skip such a collector and say which types
 * are missing (`lackingComponents`). What a collector reports is data: it
 * only ever holds a config back, never adds one.
 */
import { parse } from "yaml";
import type { Store } from "../store/store.ts";
import type { ComponentDetails } from "../gen/opamp/v1/opamp_pb.ts";

export const AVAILABLE_COMPONENTS = "available_components";

/** The config sections whose keys name component types (`type` or `type/name`). */
export const COMPONENT_KINDS = ["receivers", "processors", "exporters", "extensions", "connectors"] as const;
type Kind = (typeof COMPONENT_KINDS)[number];

/** Bounds on what is kept of a report: a build has a few hundred types at most. */
const MAX_TYPES_PER_KIND = 1000;
const MAX_TYPE_LENGTH = 100;

export interface Build {
  collectorId: string;
  /** The reported hash (hex), to tell a changed build without the full report. */
  hash: string;
  components: Record<Kind, string[]>;
  reportedAt: string;
}

/** The reported map bounded to type names per kind, sorted. */
export function buildOf(components: { [key: string]: ComponentDetails }): Record<Kind, string[]> {
  const out = {} as Record<Kind, string[]>;
  for (const kind of COMPONENT_KINDS) {
    const types = Object.keys(components[kind]?.subComponentMap ?? {}).filter((type) => type.length > 0 && type.length <= MAX_TYPE_LENGTH);
    out[kind] = types.sort().slice(0, MAX_TYPES_PER_KIND);
  }
  return out;
}

export class Builds {
  constructor(private readonly store: Pick<Store, "get" | "write">) {}

  /** Keeps a full report, written only when its hash is new for the collector. */
  async report(collectorId: string, hash: string, components: Record<Kind, string[]>): Promise<void> {
    const known = await this.store.get<Build>(AVAILABLE_COMPONENTS, collectorId);
    if (known?.data.hash === hash) return;
    const build: Build = { collectorId, hash, components, reportedAt: new Date().toISOString() };
    await this.store.write([{ op: "put", collection: AVAILABLE_COMPONENTS, id: collectorId, data: build }]);
  }

  async hash(collectorId: string): Promise<string | null> {
    return (await this.store.get<Build>(AVAILABLE_COMPONENTS, collectorId))?.data.hash ?? null;
  }
}

/** Why a collector is skipped when its build lacks `missing` (lackingComponents). */
export function lackingReason(missing: readonly string[]): string {
  return `its build lacks ${missing.join(", ")}, which the new config uses (the components its OpAMP supervisor reports)`;
}

/**
 * The component types an OpenTelemetry Collector config uses that the build
 * lacks, as `<kind singular>/<type>` (e.g. `receiver/kafka`), sorted; empty
 * when it has them all. Every defined component counts, used in a pipeline or
 * not: the collector looks each one's factory up when it loads the file.
 */
export function lackingComponents(body: string, build: Pick<Build, "components">): string[] {
  return lackingIn(usedComponents(body), build);
}

/** The component types a config defines, per kind; null when it does not parse (nothing can be said of it). */
type UsedComponents = Map<Kind, string[]> | null;

function usedComponents(body: string): UsedComponents {
  let doc: unknown;
  try {
    doc = parse(body);
  } catch {
    return null;
  }
  if (typeof doc !== "object" || doc === null) return null;
  const used = new Map<Kind, string[]>();
  for (const kind of COMPONENT_KINDS) {
    const section = (doc as Record<string, unknown>)[kind];
    if (typeof section === "object" && section !== null)
      used.set(
        kind,
        Object.keys(section).map((id) => id.split("/")[0]!),
      );
  }
  return used;
}

function lackingIn(used: UsedComponents, build: Pick<Build, "components">): string[] {
  // An empty report (an extension that could not read its build) says nothing of what it lacks.
  if (used === null || COMPONENT_KINDS.every((kind) => build.components[kind].length === 0)) return [];
  let have = BUILD_SETS.get(build);
  if (!have) BUILD_SETS.set(build, (have = new Map(COMPONENT_KINDS.map((kind) => [kind, new Set(build.components[kind])]))));
  const missing = new Set<string>();
  for (const [kind, types] of used) for (const type of types) if (!have.get(kind)!.has(type)) missing.add(`${kind.slice(0, -1)}/${type}`);
  return [...missing].sort();
}

/** A build's types as sets, made once per build read: a fleet check asks each build once per collector. */
const BUILD_SETS = new WeakMap<Pick<Build, "components">, Map<Kind, Set<string>>>();

/**
 * `lackingComponents` over a fleet: each config is parsed once per `key`,
 * which callers give configs with the same components alike (those filled in
 * from one template differ only in string values, never in a component's id).
 */
export function lackingChecker(): (key: string, body: string, build: Pick<Build, "components">) => string[] {
  const parsed = new Map<string, UsedComponents>();
  return (key, body, build) => {
    let used = parsed.get(key);
    if (used === undefined) parsed.set(key, (used = usedComponents(body)));
    return lackingIn(used, build);
  };
}
