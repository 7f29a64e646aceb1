/**
 * Secrets in rendered configs. A render writes each secret as its marker
 * (`"<secret:<id>>"`, see secrets/values.ts), so what is stored, previewed,
 * diffed and hashed never holds a plaintext. Only delivery, over a
 * collector's authenticated channel, puts the plaintexts in, quoted exactly
 * as the runtime's writer would have quoted them in that place.
 */
import { Document, Scalar } from "yaml";
import type { Runtime } from "../../shared/vocabulary.ts";
import { QUOTED_MARKER } from "../secrets/values.ts";
import { unwritableCharacter } from "../catalog/validate.ts";
import { quoteAlloy } from "../catalog/alloy-syntax.ts";

/**
 * A string value as the runtime's writer quotes it: Runtime O's YAML writes
 * every string double-quoted as JSON with each `$` doubled (the collector's
 * escape for its `${…}` expansion, see otelcol.ts); Alloy quotes like Go.
 * Used for secrets at delivery and for attribute values (attributes.ts), per
 * collector, so the common case is fast: for text the catalog accepts
 * (validate.ts), the YAML writer's JSON form is JSON.stringify's (the test
 * holds the two equal); only other text goes through the writer itself.
 */
export function quotedSecret(runtime: Runtime, plaintext: string): string {
  if (runtime === "alloy") return quoteAlloy(plaintext);
  const escaped = plaintext.replaceAll("$", () => "$$");
  if (unwritableCharacter(plaintext) === undefined) return JSON.stringify(escaped);
  const doc = new Document(escaped);
  (doc.contents as Scalar).type = Scalar.QUOTE_DOUBLE;
  return doc.toString({ lineWidth: 0, doubleQuotedAsJSON: true }).trimEnd();
}

/** The config as the collector must receive it: every marker replaced by its secret, quoted for `runtime`. */
export async function deliverable(runtime: Runtime, body: string, plaintextOf: (id: string) => Promise<string>): Promise<string> {
  const quoted = new Map<string, string>();
  for (const match of body.matchAll(QUOTED_MARKER)) {
    const id = match[1]!;
    if (!quoted.has(id)) quoted.set(id, quotedSecret(runtime, await plaintextOf(id)));
  }
  return quoted.size === 0 ? body : body.replace(QUOTED_MARKER, (_, id: string) => quoted.get(id)!);
}
