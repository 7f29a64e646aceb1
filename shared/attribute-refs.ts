/**
 * Attribute references in config strings: `{{attr "KEY"}}` stands for the
 * value of the collector attribute KEY (shared/collector-attributes.ts) and is
 * filled in per collector when a configuration is rendered. Several may sit in
 * one string among other text (`"https://{{attr "datacenter"}}.example.com"`).
 *
 * The form is exact: `{{attr`, one space, a double-quoted KEY of 1–128
 * letters, digits or `_ . : / -`, `}}`. Any other text starting `{{attr` is an
 * error, so a typo never reaches a collector as literal text. It cannot be
 * taken for the collector's `${env:…}` expansion (confmap expands only `$`
 * forms, and svc writes every `$` as `$$`, server/render/otelcol.ts) or an
 * Alloy expression: it only ever lives inside a string value, and Alloy's
 * scanner reads a string as characters and escapes, nothing interpolated
 * (grafana/alloy syntax/scanner/scanner.go `scanString`, read at 3ad0d812).
 * Here, in shared/, because the UI checks what an operator types with the
 * same grammar.
 */

/** Text that starts a reference; every occurrence must be a whole, well-formed one. */
export const REFERENCE_START = "{{attr";

/** A referenced key, as a regular expression's source: 1–128 letters, digits or `_ . : / -`. */
export const KEY_PATTERN = "[A-Za-z0-9_.:/-]{1,128}";

const AT = new RegExp(`\\{\\{attr "(${KEY_PATTERN})"\\}\\}`, "y");

export interface AttributeReference {
  key: string;
  /** Offsets in the text: `text.slice(start, end)` is the whole reference. */
  start: number;
  end: number;
}

/** A malformed reference: the 1-based column where it starts, and what is wrong. */
export interface ReferenceProblem {
  column: number;
  message: string;
}

export type ParsedReferences = { references: AttributeReference[]; problem?: undefined } | { problem: ReferenceProblem; references?: undefined };

/** Whether `text` holds anything that starts a reference (well-formed or not). */
export function hasReferenceStart(text: string): boolean {
  return text.includes(REFERENCE_START);
}

/** Every reference in `text` in order, or the first malformed one. */
export function parseReferences(text: string): ParsedReferences {
  const references: AttributeReference[] = [];
  let from = 0;
  for (;;) {
    const start = text.indexOf(REFERENCE_START, from);
    if (start < 0) return { references };
    AT.lastIndex = start;
    const found = AT.exec(text);
    if (!found) {
      return {
        problem: {
          column: start + 1,
          message: `has a malformed attribute reference at column ${start + 1}: write {{attr "KEY"}}, KEY being 1–128 letters, digits or _ . : / -`,
        },
      };
    }
    references.push({ key: found[1]!, start, end: AT.lastIndex });
    from = AT.lastIndex;
  }
}

/** The keys `text` references, each once, in order of appearance; malformed references are skipped. */
export function referencedKeys(text: string): string[] {
  const parsed = parseReferences(text);
  return [...new Set((parsed.references ?? []).map((r) => r.key))];
}

/** `text` with each reference replaced by `valueFor(key)`; text is taken as parsed, malformed references stay. */
export function fillReferences(text: string, valueFor: (key: string) => string): string {
  const parsed = parseReferences(text);
  if (!parsed.references || parsed.references.length === 0) return text;
  let out = "";
  let at = 0;
  for (const r of parsed.references) {
    out += text.slice(at, r.start) + valueFor(r.key);
    at = r.end;
  }
  return out + text.slice(at);
}
