/**
 * The generated corpus the conformance checks render (test support, used by
 * conformance.test.ts, upstream/conform.test.ts and test/upstream/): each
 * registered type's corpus (its folder's corpus.ts) on every signal it
 * carries, for unknown and known collector versions around each upstream rename.
 */
import { type PipelineRecord, SIGNALS, type Signal, type TopologyNode } from "../../../shared/config-records.ts";
import type { CollectorConfigInput } from "../render-input.ts";
import type { CatalogFolder, CorpusConfig } from "../folder.ts";
import { DESTINATION_FOLDERS, findType, PROCESSOR_FOLDERS, SOURCE_FOLDERS, SOURCE_TYPES } from "../registry.ts";
import { validateComponentConfig } from "../validate.ts";
import { parseCollectorVersion } from "../versions.ts";
import { versionProblem } from "./tables.ts";

/** Unknown, just before and at each rename, and the newest the tables were read at. */
export const VERSIONS = [null, "0.120.0", "0.143.0", "0.144.0", "0.146.0", "0.159.0", "9.3.1"];

type Corpora = Readonly<Record<string, readonly CorpusConfig[]>>;
export const SOURCES: Corpora = Object.fromEntries(SOURCE_FOLDERS.map((f) => [f.type.type, f.corpus]));
export const DESTINATIONS: Corpora = Object.fromEntries(DESTINATION_FOLDERS.map((f) => [f.type.type, f.corpus]));

/** Every processor's corpus for `signal`, in catalog order, as pipeline nodes. */
export function processorNodes(signal: Signal): TopologyNode[] {
  const specs = PROCESSOR_FOLDERS.flatMap((f) => f.corpus[signal].map((config) => ({ type: f.type.type, config: { ...config } })));
  return specs.map((processor, i) => ({ id: `p${i}`, kind: "processor", processor }));
}

/**
 * Sources that differ as a whole on Alloy (host metrics, Kubernetes events:
 * render/parity.ts), which refuses processors that read them: their Alloy
 * renderings run through the batch processors only.
 */
export const READS_REFUSED_ON_ALLOY = new Set(SOURCE_TYPES.filter((t) => t.delivery.differsAs === "whole").map((t) => t.type));

/** Whether the tables say the collector version can run the source's receiver (unknown versions get the current form). */
export function runsSource(sourceType: string, config: Record<string, unknown>, version: string | null): boolean {
  const target = { version: parseCollectorVersion(version) };
  const type = findType("source", sourceType)!;
  return versionProblem(type.otelcol(validateComponentConfig("source", sourceType, config), target).type, target) === undefined;
}

/** One collector: the source variant through every processor (or, with `batchOnly`, the batch ones) into the destination variant. */
export function corpusInput(
  signal: Signal,
  source: [string, Record<string, unknown>],
  destination: [string, Record<string, unknown>],
  version: string | null,
  batchOnly = false,
): CollectorConfigInput {
  const processors = processorNodes(signal).filter((n) => !batchOnly || n.processor!.type === "batch");
  return collectorInput(signal, source, destination, version, processors);
}

/** One collector: the source variant through `processors` into the destination variant. */
function collectorInput(
  signal: Signal,
  source: [string, Record<string, unknown>],
  destination: [string, Record<string, unknown>],
  version: string | null,
  processors: readonly TopologyNode[],
): CollectorConfigInput {
  const nodes: TopologyNode[] = [{ id: "in", kind: "source" }, ...processors, { id: "out", kind: "destination", ref: "d" }];
  const edges = nodes.slice(1).map((n, i) => ({ id: `e${i}`, source: nodes[i]!.id, target: n.id }));
  const pipeline: PipelineRecord = { id: "p", name: "p", signal, topology: { nodes, edges } };
  return {
    collector: { id: "c", name: "c", version },
    sources: new Map([["s", { id: "s", name: "s", type: source[0], config: source[1] }]]),
    destinations: new Map([["d", { id: "d", name: "d", type: destination[0], config: destination[1] }]]),
    pipelines: new Map([["p", pipeline]]),
    activations: { collectorId: "c", sources: [{ sourceId: "s", configOverrides: {} }], destinations: [{ destinationId: "d", configOverrides: {}, tags: {} }] },
    routes: [{ id: "r", collectorId: "c", sourceId: "s", pipelineId: "p" }],
  };
}

export interface CorpusEntry {
  name: string;
  signal: Signal;
  input: CollectorConfigInput;
  /** The Runtime R input, when both the source and the destination run on Alloy and the version is unknown. */
  alloy: CollectorConfigInput | null;
}

/** Every source variant into every destination variant through every processor, on each signal both carry, at each version in `versions` that runs the source. */
export function* corpus(
  versions: readonly (string | null)[] = VERSIONS,
  sources: Corpora = SOURCES,
  destinations: Corpora = DESTINATIONS,
): Generator<CorpusEntry> {
  for (const signal of SIGNALS) {
    for (const [sourceType, sourceConfigs] of Object.entries(sources)) {
      if (!findType("source", sourceType)!.signals.includes(signal)) continue;
      for (const [destinationType, destinationConfigs] of Object.entries(destinations)) {
        const type = findType("destination", destinationType)!;
        if (!type.signals.includes(signal)) continue;
        for (const [i, sourceConfig] of sourceConfigs.entries()) {
          for (const [j, destinationConfig] of destinationConfigs.entries()) {
            for (const version of versions) {
              if (!runsSource(sourceType, sourceConfig, version)) continue;
              yield {
                name: `${signal} ${sourceType}#${i} → ${destinationType}#${j} @${version}`,
                signal,
                input: corpusInput(signal, [sourceType, sourceConfig], [destinationType, destinationConfig], version),
                alloy:
                  type.alloy !== undefined && findType("source", sourceType)!.alloy !== undefined && version === null
                    ? corpusInput(signal, [sourceType, sourceConfig], [destinationType, destinationConfig], version, READS_REFUSED_ON_ALLOY.has(sourceType))
                    : null,
              };
            }
          }
        }
      }
    }
  }
}

/**
 * What one type's conformance test renders: a source's corpus into every
 * destination's, a destination's from every source's first config, a
 * processor's configs (on their own) from the first source into the first
 * destination of each signal, at every version in `versions`.
 */
export function* corpusOf(folder: CatalogFolder, versions: readonly (string | null)[] = VERSIONS): Generator<CorpusEntry> {
  const { kind, type } = folder.type;
  const firsts = (corpora: Corpora): Corpora => Object.fromEntries(Object.entries(corpora).map(([t, configs]) => [t, configs.slice(0, 1)]));
  if (kind === "source") yield* corpus(versions, { [type]: SOURCES[type]! });
  else if (kind === "destination") yield* corpus(versions, firsts(SOURCES), { [type]: DESTINATIONS[type]! });
  else {
    const processors = folder.corpus as Readonly<Record<Signal, readonly CorpusConfig[]>>;
    for (const signal of SIGNALS) {
      const source = SOURCE_FOLDERS.find((f) => f.type.signals.includes(signal) && f.type.alloy !== undefined && !READS_REFUSED_ON_ALLOY.has(f.type.type))!;
      const destination = DESTINATION_FOLDERS.find((f) => f.type.signals.includes(signal) && f.type.alloy !== undefined)!;
      const nodes: TopologyNode[] = processors[signal].map((config, i) => ({ id: `p${i}`, kind: "processor", processor: { type, config } }));
      for (const version of versions) {
        const input = collectorInput(signal, [source.type.type, source.corpus[0]!], [destination.type.type, destination.corpus[0]!], version, nodes);
        yield { name: `${signal} ${type} @${version}`, signal, input, alloy: version === null ? input : null };
      }
    }
  }
}
