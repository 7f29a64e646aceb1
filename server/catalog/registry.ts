/**
 * Every catalog type, looked up by kind and type id, and the JSON view that
 * `GET /api/v1/catalog` serves so a UI can render a form per type.
 */
import type { CatalogEntry, CatalogView, JsonSchema } from "../../shared/catalog.ts";
import { registeredFolders, type DestinationFolder, type ProcessorFolder, type SourceFolder } from "./folder.ts";
import { runtimesOf, type ComponentKind, type ComponentType, type DestinationType, type ProcessorType, type SourceType } from "./types.ts";
import type { Runtime } from "../../shared/vocabulary.ts";

// The catalog: one line per type, its folder, in the order the catalog lists them (each folder's index.ts registers it).
import "./sources/otlp/index.ts";
import "./sources/filelog/index.ts";
import "./sources/journald/index.ts";
import "./sources/hostmetrics/index.ts";
import "./sources/syslog/index.ts";
import "./sources/prometheus/index.ts";
import "./sources/kafka/index.ts";
import "./sources/k8s_cluster/index.ts";
import "./sources/kubeletstats/index.ts";
import "./sources/k8s_events/index.ts";
import "./destinations/otlp/index.ts";
import "./destinations/otlphttp/index.ts";
import "./destinations/debug/index.ts";
import "./destinations/prometheusremotewrite/index.ts";
import "./destinations/loki/index.ts";
import "./processors/filter/index.ts";
import "./processors/batch/index.ts";
import "./processors/attributes/index.ts";
import "./processors/resource/index.ts";
import "./processors/transform/index.ts";

export const FOLDERS = registeredFolders();
export const SOURCE_FOLDERS = FOLDERS.filter((f): f is SourceFolder => f.type.kind === "source");
export const DESTINATION_FOLDERS = FOLDERS.filter((f): f is DestinationFolder => f.type.kind === "destination");
export const PROCESSOR_FOLDERS = FOLDERS.filter((f): f is ProcessorFolder => f.type.kind === "processor");

export const SOURCE_TYPES: readonly SourceType[] = SOURCE_FOLDERS.map((f) => f.type);
export const DESTINATION_TYPES: readonly DestinationType[] = DESTINATION_FOLDERS.map((f) => f.type);
export const PROCESSOR_TYPES: readonly ProcessorType[] = PROCESSOR_FOLDERS.map((f) => f.type);
export const COMPONENT_TYPES: readonly ComponentType[] = [...SOURCE_TYPES, ...DESTINATION_TYPES, ...PROCESSOR_TYPES];

interface ByKind {
  source: SourceType;
  destination: DestinationType;
  processor: ProcessorType;
}

const index = new Map(COMPONENT_TYPES.map((t) => [`${t.kind}/${t.type}`, t]));

/** The catalog type, or undefined when `type` is not one of `kind`. */
export function findType<K extends ComponentKind>(kind: K, type: string): ByKind[K] | undefined {
  return index.get(`${kind}/${type}`) as ByKind[K] | undefined;
}

/** Why a source or destination type cannot run on `runtime`, or undefined when it can. */
export function runtimeProblem(type: SourceType | DestinationType, runtime: Runtime): string | undefined {
  return runtime === "alloy" ? type.alloyUnavailable : undefined;
}

let view: CatalogView | undefined;

/** The catalog as JSON-serialisable data; built once, so callers must not mutate it. */
export function catalogView(): CatalogView {
  view ??= {
    sources: SOURCE_TYPES.map(entry),
    destinations: DESTINATION_TYPES.map(entry),
    processors: PROCESSOR_TYPES.map(entry),
  };
  return view;
}

function entry(t: ComponentType): CatalogEntry {
  return {
    type: t.type,
    title: t.title,
    description: t.description,
    signals: [...t.signals],
    runtimes: runtimesOf(t),
    ...(t.kind !== "processor" && t.alloyUnavailable !== undefined ? { unavailable: { alloy: t.alloyUnavailable } } : {}),
    schema: formSchema(JSON.parse(JSON.stringify(t.schema)) as JsonSchema),
  };
}

/**
 * A field with a default may be left out (the server fills it in), so it is
 * not `required` in the schema a form is built from.
 */
function formSchema(schema: JsonSchema): JsonSchema {
  for (const value of Object.values(schema)) {
    if (Array.isArray(value)) value.forEach((v) => isSchema(v) && formSchema(v));
    else if (isSchema(value)) formSchema(value);
  }
  const properties = schema.properties;
  if (Array.isArray(schema.required) && isSchema(properties)) {
    const required = schema.required.filter((key: string) => !(isSchema(properties[key]) && "default" in properties[key]));
    if (required.length > 0) schema.required = required;
    else delete schema.required;
  }
  return schema;
}

function isSchema(value: unknown): value is JsonSchema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
