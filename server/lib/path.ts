/**
 * Decoding a percent-encoded path segment. A malformed escape (`%E0%A4%A`,
 * `%zz`) is the client's mistake, so it is a 400 in the one error shape, never
 * a thrown URIError that would surface as a 500 or be read as "not found".
 */
import { ValidationError } from "../errors.ts";

export function decodePathSegment(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new ValidationError("The request path holds a malformed percent-encoding.", [
      { path: "path", message: "has a '%' that is not followed by two hex digits of valid UTF-8" },
    ]);
  }
}
