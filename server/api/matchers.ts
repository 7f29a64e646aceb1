/** Matchers as a request gives them (collectors.ts, publish.ts, rollout-options.ts). */
import { MatcherListError, parseMatcherList, type Matcher } from "../../shared/matchers.ts";
import type { Collectors } from "../collectors/collectors.ts";
import { ValidationError } from "../errors.ts";

/** Matchers from a request, or a 400 naming each bad one (`matchers[2]`) and its column. */
export function requestMatchers(inputs: readonly string[], path: string): Matcher[] {
  try {
    return parseMatcherList(inputs, path);
  } catch (error) {
    if (!(error instanceof MatcherListError)) throw error;
    throw new ValidationError(`Invalid matcher: ${error.message}`, error.details);
  }
}

/**
 * Matchers that select collectors, from a request: parsed (400 naming `path[i]` and the column), and none
 * on a key that only collectors' own, untrusted reports hold (400 naming it: collectors/trust.ts).
 */
export async function targetingMatchers(collectors: Pick<Collectors, "refuseUntrusted">, inputs: readonly string[], path: string): Promise<Matcher[]> {
  const matchers = requestMatchers(inputs, path);
  await collectors.refuseUntrusted(
    matchers.map((m) => m.name),
    path,
  );
  return matchers;
}
