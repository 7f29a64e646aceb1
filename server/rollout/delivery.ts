/**
 * What a collector channel (opamp/, remotecfg/) may ask of the rollout: the
 * target to send and the body to send it as, and what to record of what the
 * collector says back. The channels take this in place of the rollout's
 * classes, as opamp-go hands its server `types.Callbacks` (OpAMP also waits
 * for a re-target its attribute report caused, retarget.ts `settled`); the
 * assembly (app.ts) passes TargetDelivery (target-delivery.ts).
 */
import type { CollectorConfig, ConfigReport, EffectiveConfig } from "./records.ts";
import type { RenderedConfig } from "./renderer.ts";
import type { EffectiveIntake } from "./effective-intake.ts";

/**
 * Hears of a collector's changed target by its id, and whether what a
 * channel offers of it (its config, retries, whether it is withheld) changed:
 * false for a state change only, which needs no push. undefined: any target
 * may have changed (offerChanged true).
 */
export type TargetListener = (collectorId: string | undefined, offerChanged: boolean) => void;

export interface Delivery {
  /** The collector's target with its rendered config (secrets as markers), or null when nothing was published to it. */
  target(collectorId: string): Promise<{ target: CollectorConfig; rendered: RenderedConfig } | null>;
  /** Where the collector's target stands, without its rendered bytes: enough for a poll from a collector that runs it. */
  targetOf(collectorId: string): Promise<CollectorConfig | null>;
  /** The body to send: `rendered` with its secrets in (memory only); null when one cannot be opened here, the target then marked undelivered. */
  delivered(collectorId: string, rendered: RenderedConfig): Promise<string | null>;
  /** The collector was sent its target of this hash: it is applying until the collector reports. */
  fetched(collectorId: string, hash: string): Promise<void>;
  /** Records what the collector says of a config it was sent: applying, applied, or failed with its message. */
  report(collectorId: string, report: ConfigReport): Promise<void>;
  /** Records the config the collector says it runs (redacted), and answers whether it was looked at. */
  setEffective(collectorId: string, files: EffectiveConfig["files"]): Promise<EffectiveIntake>;
  /** Whether the collector's next effective config would be looked at: a channel that had one skipped asks again then. */
  effectiveWelcome(collectorId: string): boolean;
  /** `text` from the collector with every secret it may have been delivered, and any svc token, taken out. */
  redact(collectorId: string, text: string): Promise<string>;
  /** Calls `listener` when a target changes, on any replica; answers the unsubscribe. */
  onTargetChanged(listener: TargetListener): () => void;
}
