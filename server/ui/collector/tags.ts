/**
 * What the collector forms (add, settings) read. Tags are one text box of
 * `key=value` pairs separated by commas or newlines; a pair without `=` or
 * with an empty key is refused here, before any call (status 0: no HTTP
 * answer), with the error on the tags field.
 */
import { ApiError } from "../api.ts";

export function tagsText(tags: Record<string, string>): string {
  return Object.entries(tags)
    .map(([key, value]) => `${key}=${value}`)
    .join(", ");
}

export function parseTags(text: string): Record<string, string> {
  const tags: Record<string, string> = {};
  for (const part of text
    .split(/[,\n]/)
    .map((p) => p.trim())
    .filter((p) => p !== "")) {
    const at = part.indexOf("=");
    const key = at === -1 ? "" : part.slice(0, at).trim();
    if (key === "") throw new ApiError(0, "validation_failed", "Each tag is key=value.", [{ path: "tags", message: `"${part}" is not key=value` }]);
    tags[key] = part.slice(at + 1).trim();
  }
  return tags;
}

export interface CollectorFormFields {
  text: (key: string) => string;
  name: string;
  environment: string | null;
  tags: Record<string, string>;
}

/**
 * The name, environment (null when blank) and tags a collector form holds,
 * trimmed; null after handing parseTags' ApiError to `onError`.
 */
export function readCollectorForm(form: HTMLFormElement, onError: (error: ApiError) => void): CollectorFormFields | null {
  const data = new FormData(form);
  const text = (key: string) => String(data.get(key) ?? "").trim();
  const environment = text("environment");
  try {
    return { text, name: text("name"), environment: environment === "" ? null : environment, tags: parseTags(text("tags")) };
  } catch (caught) {
    onError(caught as ApiError);
    return null;
  }
}
