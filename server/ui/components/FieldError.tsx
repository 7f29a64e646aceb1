/**
 * The API's validation details ({path, message}, see server/lib/validate.ts)
 * beside the input they concern, so the user sees which field to fix and a
 * screen reader reads the message with the input (aria-describedby).
 */
import type { ApiError } from "../api.ts";
import { isPathDetail } from "../schema/errors.ts";

/** Messages for `field` itself or anything below it (`scopes[2]`). */
function messagesFor(error: ApiError | null, field: string): string[] {
  return (error?.details ?? [])
    .filter(isPathDetail)
    .filter((d) => d.path === field || d.path.startsWith(`${field}[`) || d.path.startsWith(`${field}.`))
    .map((d) => d.message);
}

/** Props for the input of `field`: marks it invalid and points it at its FieldError. */
export function fieldProps(error: ApiError | null, field: string, errorId: string) {
  const invalid = messagesFor(error, field).length > 0;
  return { "aria-invalid": invalid || undefined, "aria-describedby": invalid ? errorId : undefined };
}

export function FieldError({ id, error, field }: { id: string; error: ApiError | null; field: string }) {
  const messages = messagesFor(error, field);
  if (messages.length === 0) return null;
  return (
    <span id={id} className="field-error">
      {messages.join("; ")}
    </span>
  );
}
