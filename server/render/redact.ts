/**
 * Plaintexts taken out of free text a collector wrote (an effective config,
 * an error message), however it spelled them: each becomes its marker.
 */
import { RUNTIMES } from "../../shared/vocabulary.ts";
import { quotedSecret } from "./secrets.ts";
import { QUOTED_MARKER, secretMarker } from "../secrets/values.ts";

/**
 * How a plaintext may be spelled in text a collector wrote: as is or
 * `$`-doubled (the collector's escape for its expansion), each plain, inside
 * JSON or YAML double quotes, or inside YAML single quotes; and inside either
 * runtime's quoting, as it was delivered.
 */
export function spellings(plaintext: string): string[] {
  const forms = new Set<string>();
  for (const value of [plaintext, plaintext.replaceAll("$", () => "$$")]) {
    forms.add(value).add(JSON.stringify(value).slice(1, -1)).add(value.replaceAll("'", "''"));
  }
  for (const runtime of RUNTIMES) forms.add(quotedSecret(runtime, plaintext).slice(1, -1));
  forms.delete("");
  return [...forms];
}

/** A marker already in a text (QUOTED_MARKER without its quotes): kept whole, so no plaintext is found inside one. */
const MARKER = QUOTED_MARKER.source.slice(1, -1);

/**
 * A function replacing, in one pass, every spelling of each plaintext of
 * `sealed` (plaintext → the id of its version) by its marker, the longest
 * spelling first where several match at one place. Markers already in the
 * text stay as they are, so redacting twice changes nothing.
 */
export function plaintextRedactor(sealed: Iterable<readonly [string, string]>): (text: string) => string {
  const markerOf = new Map<string, string>();
  for (const [plaintext, id] of sealed) for (const spelling of spellings(plaintext)) if (!markerOf.has(spelling)) markerOf.set(spelling, secretMarker(id));
  if (markerOf.size === 0) return (text) => text;
  const alternatives = [...markerOf.keys()].sort((a, b) => b.length - a.length).map((s) => RegExp.escape(s));
  const pattern = new RegExp([MARKER, ...alternatives].join("|"), "g");
  return (text) => text.replace(pattern, (match) => markerOf.get(match) ?? match);
}
