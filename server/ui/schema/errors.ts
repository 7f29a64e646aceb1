/**
 * API errors as a form shows them: each detail the server names by path
 * ({path, message}, see server/lib/validate.ts) next to the field that
 * edits that path, and the whole error, details as plain sentences, in the
 * ErrorMessage summary at the top.
 */
import { ApiError } from "../api.ts";
import { errorTarget, type Schema } from "./schema.ts";

export interface PathDetail {
  path: string;
  message: string;
}

export function isPathDetail(detail: unknown): detail is PathDetail {
  return typeof detail === "object" && detail !== null && typeof (detail as PathDetail).path === "string" && typeof (detail as PathDetail).message === "string";
}

/** Field path → the messages to show beside that field. */
export type FieldErrors = Record<string, string[]>;

/** The error's details grouped by the field that shows them; a detail deeper than its field keeps its own path in the text. */
export function fieldErrors(error: ApiError | null, schema: Schema, root = ""): FieldErrors {
  return detailErrors(error?.details ?? [], schema, root);
}

/** fieldErrors() over details gathered some other way (e.g. the pipeline editor's, per processor). */
export function detailErrors(details: readonly unknown[], schema: Schema, root = ""): FieldErrors {
  const byField: FieldErrors = {};
  for (const detail of details) {
    if (!isPathDetail(detail)) continue;
    const target = errorTarget(schema, root, detail.path);
    if (target === null) continue;
    const text = target === detail.path ? detail.message : `${where(detail.path.slice(target.length))}: ${detail.message}`;
    (byField[target] ??= []).push(text);
  }
  return byField;
}

/** The rest of a path below its field in words: `[1]` → `item 2`, `.a.b` → `a.b`. */
function where(rest: string): string {
  return rest.replace(/^\[(\d+)\]/, (_, n: string) => `item ${Number(n) + 1}`).replace(/^\./, "");
}

/** The same error with `{path, message}` details written as "path: message", for ErrorMessage. */
export function readableError(error: ApiError | null): ApiError | null {
  if (error === null || !error.details.some(isPathDetail)) return error;
  const details = error.details.map((d) => (isPathDetail(d) ? `${d.path}: ${d.message}` : d));
  return new ApiError(error.status, error.code, error.message, details);
}
