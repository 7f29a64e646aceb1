/**
 * The "never silent" half of runtime parity: where an Alloy collector would
 * deliver other data than a Runtime O one for a source type and svc cannot
 * normalise it (catalog SourceType.delivery.difference), every render for
 * Alloy names it, so the publish plan, the pipeline preview and route
 * creation show it before anything is delivered. (A processor that reads
 * such a field is refused outright: parity.ts.)
 */
import { findType } from "../catalog/registry.ts";
import type { Runtime } from "../../shared/vocabulary.ts";
import type { RuntimeDifference } from "../../shared/rollouts.ts";

/** The differences of these source types on `runtime`, one per type in name order; none on Runtime O, the reference. */
export function runtimeDifferences(runtime: Runtime, sourceTypes: Iterable<string>): RuntimeDifference[] {
  if (runtime !== "alloy") return [];
  return [...new Set(sourceTypes)].sort().flatMap((sourceType) => {
    const difference = findType("source", sourceType)?.delivery.difference;
    return difference ? [{ sourceType, difference }] : [];
  });
}
