/**
 * What a request says about who a rollout reaches and how it rolls out, read
 * the same way by publish (publish.ts) and by edits that deploy (collectors.ts):
 * a scope of collector ids or matchers, and a strategy with its canary.
 */
import { compileFilter } from "../../shared/collector-filter.ts";
import type { Strategy } from "../../shared/rollouts.ts";
import { ValidationError } from "../errors.ts";
import type { Collectors } from "../collectors/collectors.ts";
import { targetingMatchers } from "./matchers.ts";

/** What reading a scope needs: the untrusted-key check and the trusted keys. */
type Targeting = Pick<Collectors, "refuseUntrusted" | "trust">;

/** A request's scope: ids or matchers, not both; matchers parsed and on trusted keys (a 400 names `match[i]`). */
export async function scopeOf(collectors: Targeting, body: { collectorIds?: string[]; match?: string[] }, path = "") {
  if (body.collectorIds !== undefined && body.match !== undefined) {
    throw new ValidationError("Give collectorIds or match, not both.", [{ path: `${path}match`, message: "cannot be combined with collectorIds" }]);
  }
  return { collectorIds: body.collectorIds, match: body.match && (await targetingMatchers(collectors, body.match, `${path}match`)) };
}

/** The strategy checked (batchSize or batchPercent, not both) and its canary batch as a predicate over the changed collectors. */
export async function strategyOf(collectors: Targeting, strategy: Strategy | undefined, path = "strategy") {
  if (strategy && strategy.batchSize !== undefined && strategy.batchPercent !== undefined) {
    throw new ValidationError("Give batchSize or batchPercent, not both.", [{ path: `${path}.batchPercent`, message: "cannot be combined with batchSize" }]);
  }
  return { strategy, canary: await canaryOf(collectors, strategy, path) };
}

async function canaryOf(collectors: Targeting, strategy: Strategy | undefined, path: string) {
  if (!strategy?.canary) return undefined;
  const scope = await scopeOf(collectors, strategy.canary, `${path}.canary.`);
  if (scope.collectorIds) {
    const ids = new Set(scope.collectorIds);
    return (collector: { id: string }) => ids.has(collector.id);
  }
  if (!scope.match) throw new ValidationError("A canary names collectorIds or match.", [{ path: `${path}.canary`, message: "names neither collectorIds nor match" }]);
  return compileFilter({ match: scope.match, trusted: collectors.trust.keys() });
}
