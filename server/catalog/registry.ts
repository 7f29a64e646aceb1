/**
 * Every catalog type, looked up by kind and type id, and the JSON view that
 * `GET /api/v1/catalog` serves so a UI can render a form per type.
 */
import type { CatalogEntry, CatalogView, JsonSchema } from "../../shared/catalog.ts";
import { debugDestination } from "./destinations/debug/debug.ts";
import { lokiDestination } from "./destinations/loki/loki.ts";
import { otlpDestination } from "./destinations/otlp/otlp.ts";
import { otlphttpDestination } from "./destinations/otlphttp/otlphttp.ts";
import { prometheusRemoteWriteDestination } from "./destinations/prometheusremotewrite/prometheusremotewrite.ts";
import { attributesProcessor } from "./processors/attributes/attributes.ts";
import { batchProcessor } from "./processors/batch/batch.ts";
import { filterProcessor } from "./processors/filter/filter.ts";
import { resourceProcessor } from "./processors/resource/resource.ts";
import { transformProcessor } from "./processors/transform/transform.ts";
import { filelogSource } from "./sources/filelog/filelog.ts";
import { hostmetricsSource } from "./sources/hostmetrics/hostmetrics.ts";
import { journaldSource } from "./sources/journald/journald.ts";
import { k8sClusterSource } from "./sources/k8s_cluster/k8s_cluster.ts";
import { k8sEventsSource } from "./sources/k8s_events/k8s_events.ts";
import { kafkaSource } from "./sources/kafka/kafka.ts";
import { kubeletstatsSource } from "./sources/kubeletstats/kubeletstats.ts";
import { otlpSource } from "./sources/otlp/otlp.ts";
import { prometheusSource } from "./sources/prometheus/prometheus.ts";
import { syslogSource } from "./sources/syslog/syslog.ts";
import { runtimesOf, type ComponentKind, type ComponentType, type DestinationType, type ProcessorType, type SourceType } from "./types.ts";
import type { Runtime } from "../../shared/vocabulary.ts";

export const SOURCE_TYPES: readonly SourceType[] = [
  otlpSource,
  filelogSource,
  journaldSource,
  hostmetricsSource,
  syslogSource,
  prometheusSource,
  kafkaSource,
  k8sClusterSource,
  kubeletstatsSource,
  k8sEventsSource,
];

export const DESTINATION_TYPES: readonly DestinationType[] = [
  otlpDestination,
  otlphttpDestination,
  debugDestination,
  prometheusRemoteWriteDestination,
  lokiDestination,
];

export const PROCESSOR_TYPES: readonly ProcessorType[] = [filterProcessor, batchProcessor, attributesProcessor, resourceProcessor, transformProcessor];

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
