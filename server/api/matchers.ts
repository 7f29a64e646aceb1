/** Matchers as a request gives them (collectors.ts, publish.ts, rollout-options.ts). */
import { MatcherListError, parseMatcherList, type Matcher } from "../../shared/matchers.ts";
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
