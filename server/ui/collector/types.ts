/** The API answers the collector page reads, typed from the server's own route schemas (types only: nothing server-side reaches the bundle). */
import type { Static } from "@sinclair/typebox";
import type { DestinationActivation, SourceActivation } from "../../api/activations.ts";
import type { Component as ComponentSchema, Route as RouteSchema } from "../../api/config-schemas.ts";
import type { ConfigVersion as VersionSchema, EffectiveConfig as EffectiveSchema, HistoryEntry as HistorySchema } from "../../api/publish.ts";
import type { Throughput as ThroughputSchema } from "../../api/throughput.ts";

export type Throughput = Static<typeof ThroughputSchema>;
export type HistoryEntry = Static<typeof HistorySchema>;
export type ConfigVersion = Static<typeof VersionSchema>;
export type EffectiveConfig = Static<typeof EffectiveSchema>;
export type Component = Static<typeof ComponentSchema>;
export type RouteRecord = Static<typeof RouteSchema>;
export type SourceActivationItem = Static<typeof SourceActivation>;
export type DestinationActivationItem = Static<typeof DestinationActivation>;
