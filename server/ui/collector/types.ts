/** The API answers the collector page reads, under the names its components use (types only: shared/ schemas stay out of the bundle). */
export type { Throughput } from "../../../shared/throughput.ts";
export type { ConfigVersion, EffectiveConfig, HistoryEntry } from "../../../shared/rollouts.ts";
export type {
  Component,
  DestinationActivationAnswer as DestinationActivationItem,
  RouteAnswer as RouteRecord,
  SourceActivationAnswer as SourceActivationItem,
} from "../../../shared/config-answers.ts";
