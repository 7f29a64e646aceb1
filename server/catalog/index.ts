/**
 * The catalog of source, destination and processor types: what each `config`
 * may hold (TypeBox schemas, served as JSON Schema by `catalogView()`), how it
 * is validated (`validateComponentConfig`, `mergeOverrides`) and how it
 * renders in Runtime O (collector YAML) and Runtime R (Alloy syntax).
 */
export { mergeConfig } from "./merge.ts";
export {
  catalogView,
  COMPONENT_TYPES,
  DESTINATION_TYPES,
  findType,
  PROCESSOR_TYPES,
  runtimeProblem,
  SOURCE_TYPES,
} from "./registry.ts";
export {
  COMPONENT_KINDS,
  runtimesOf,
  type CollectorVersion,
  type OtelcolTarget,
  type ComponentKind,
  type ComponentType,
  type DestinationType,
  type OtelcolComponent,
  type ProcessorType,
  type SourceType,
} from "./types.ts";
export { mergeOverrides, validateComponentConfig } from "./validate.ts";
