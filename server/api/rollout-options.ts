/**
 * What a request says about who a rollout reaches and how it rolls out, read
 * the same way by publish (publish.ts) and by edits that deploy (collectors.ts):
 * a scope of collectors (each by id or name, refs.ts) or matchers, and a
 * strategy with its canary.
 */
import { compileFilter } from "../../shared/collector-filter.ts";
import type { Strategy } from "../../shared/rollouts.ts";
import { ValidationError } from "../errors.ts";
import type { Collectors } from "../collectors/collectors.ts";
import type { Refs } from "../refs/refs.ts";
import { targetingMatchers } from "./matchers.ts";

/** What reading a scope needs: the untrusted-key check, the trusted keys, and collectors by name. */
interface Targeting {
  collectors: Pick<Collectors, "refuseUntrusted" | "trust">;
  refs: Pick<Refs, "resolveAll">;
}

/**
 * A request's scope: collectors or matchers, not both; each of collectorIds an
 * id or a name (answered as ids; `collectorIds[i]` names an ambiguous one),
 * matchers parsed and on trusted keys (a 400 names `match[i]`).
 */
export async function scopeOf({ collectors, refs }: Targeting, body: { collectorIds?: string[]; match?: string[] }, path = "") {
  if (body.collectorIds !== undefined && body.match !== undefined) {
    throw new ValidationError("Give collectorIds or match, not both.", [{ path: `${path}match`, message: "cannot be combined with collectorIds" }]);
  }
  return {
    collectorIds: body.collectorIds && (await refs.resolveAll("collector", body.collectorIds, (i) => `${path}collectorIds[${i}]`)),
    match: body.match && (await targetingMatchers(collectors, body.match, `${path}match`)),
  };
}

/** The strategy checked (batchSize or batchPercent, not both) and its canary batch as a predicate over the changed collectors. */
export async function strategyOf(targeting: Targeting, strategy: Strategy | undefined, path = "strategy") {
  if (strategy && strategy.batchSize !== undefined && strategy.batchPercent !== undefined) {
    throw new ValidationError("Give batchSize or batchPercent, not both.", [{ path: `${path}.batchPercent`, message: "cannot be combined with batchSize" }]);
  }
  return { strategy, canary: await canaryOf(targeting, strategy, path) };
}

async function canaryOf(targeting: Targeting, strategy: Strategy | undefined, path: string) {
  if (!strategy?.canary) return undefined;
  const scope = await scopeOf(targeting, strategy.canary, `${path}.canary.`);
  if (scope.collectorIds) {
    const ids = new Set(scope.collectorIds);
    return (collector: { id: string }) => ids.has(collector.id);
  }
  if (!scope.match)
    throw new ValidationError("A canary names collectorIds or match.", [{ path: `${path}.canary`, message: "names neither collectorIds nor match" }]);
  return compileFilter({ match: scope.match, trusted: targeting.collectors.trust.keys() });
}
