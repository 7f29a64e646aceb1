/**
 * Attribute references (`{{attr "KEY"}}`, shared/attribute-refs.ts) filled in
 * per collector. A configuration is rendered once with its references left in
 * its strings, where the writers quote them like any text; each collector's
 * copy then replaces every reference with its attribute's value, quoted for
 * the place the reference sits in, so that step is a join of fixed pieces.
 *
 * Where a reference sits: in a string of the runtime's syntax, written
 * `{{attr \"KEY\"}}` (YAML's JSON form and Alloy's Go quoting agree), or in an
 * OTTL string literal inside such a string (the resource processor on Runtime
 * R), `{{attr \\\"KEY\\\"}}`: each level of quoting doubles the backslashes
 * and adds one. A value is quoted as OTTL (Go) for each inner level, then as
 * the runtime writes a string (`quotedSecret`: `$` doubled on Runtime O).
 * Alloy's raw strings never hold a reference (alloy-syntax.ts).
 *
 * Only strings the catalog lets hold a reference get one (catalog/references.ts:
 * never a value a rendering reads, a key, OTTL code or a secret), so every
 * reference reaches the text as written; a rendering that rewrote one anyway
 * is refused here rather than delivered.
 */
import { fillReferences, KEY_PATTERN, REFERENCE_START, referencedKeys } from "../../shared/attribute-refs.ts";
import type { Runtime } from "../../shared/vocabulary.ts";
import { unwritableCharacter } from "../catalog/validate.ts";
import { ValidationError } from "../errors.ts";
import { validate } from "../lib/validate.ts";
import { MARKER_PREFIX } from "../secrets/values.ts";
import type { ReferencedField } from "./plan.ts";
import { quotedSecret } from "./secrets.ts";

/** A reference in rendered text: the backslashes before its quotes tell how deep in quoting it sits. */
const QUOTED_REFERENCE = new RegExp(String.raw`\{\{attr (\\+)"(${KEY_PATTERN})\1"\}\}`, "g");

interface Slot {
  key: string;
  /** Levels of quoting around it: 1 in a plain string, 2 in an OTTL literal in a string. */
  depth: number;
}

/** The text of a rendered config cut at its references: what joining it with a collector's values needs. */
export interface TemplateText {
  runtime: Runtime;
  /** The text between references: one more piece than slots. */
  pieces: string[];
  slots: Slot[];
}

/** A rendered config cut at its references, with what checking a collector's values needs. */
export interface AttributeTemplate extends TemplateText {
  /** Every key the config references (in the text or in a field checked below), sorted. */
  keys: string[];
  /** The first place each key is referenced from, for messages. */
  where: ReadonlyMap<string, string>;
  fields: readonly ReferencedField[];
}

function fail(path: string, message: string): never {
  throw new ValidationError(`The configuration cannot be rendered: ${path}: ${message}.`, [{ path, message }]);
}

/** A template's id: the hash of its text, so equal templates of different publishes share one stored document. */
export function templateId(template: TemplateText): string {
  return Bun.SHA256.hash(JSON.stringify([template.runtime, template.pieces, template.slots]), "hex");
}

/** The template of a rendered body, or null when it references no attribute. */
export function attributeTemplate(runtime: Runtime, body: string, fields: readonly ReferencedField[]): AttributeTemplate | null {
  if (fields.length === 0 && !body.includes(REFERENCE_START)) return null;
  const where = new Map<string, string>();
  for (const field of fields) for (const key of referencedKeys(field.text)) if (!where.has(key)) where.set(key, field.path);
  const pieces: string[] = [];
  const slots: Slot[] = [];
  let at = 0;
  for (const found of body.matchAll(QUOTED_REFERENCE)) {
    const backslashes = found[1]!.length;
    const depth = Math.log2(backslashes + 1);
    const key = found[2]!;
    if (!Number.isInteger(depth)) fail(where.get(key) ?? "(rendered configuration)", `the reference to attribute '${key}' was rewritten while rendering`);
    pieces.push(body.slice(at, found.index));
    slots.push({ key, depth });
    at = found.index + found[0].length;
  }
  pieces.push(body.slice(at));
  // Every `{{attr` the text holds must have been a reference found above: anything else is a reference a rendering rewrote.
  const starts = body.split(REFERENCE_START).length - 1;
  if (starts !== slots.length) {
    const field = fields.find((f) => !body.includes(quotedOnce(runtime, f.text)));
    fail(field?.path ?? "(rendered configuration)", "holds an attribute reference that rendering rewrote, so it cannot be filled in");
  }
  const keys = [...new Set([...where.keys(), ...slots.map((s) => s.key)])].sort();
  return { runtime, pieces, slots, keys, where, fields };
}

function quotedOnce(runtime: Runtime, text: string): string {
  return quotedSecret(runtime, text).slice(1, -1);
}

/** A collector's value of `key`, own keys only: `{{attr "constructor"}}` must not find Object's. */
export function attributeValue(attributes: Readonly<Record<string, string>>, key: string): string | undefined {
  return Object.hasOwn(attributes, key) ? attributes[key] : undefined;
}

/**
 * The body for one collector: every reference replaced by its attribute's
 * value, quoted for where it sits. Throws a ValidationError naming
 * `attributes.<KEY>` when the collector lacks a referenced attribute or holds
 * one no collector could read, and naming the field when a filled-in value
 * breaks its format.
 */
export function fillTemplate(template: AttributeTemplate, collectorId: string, attributes: Readonly<Record<string, string>>): string {
  const collector = () => `collector '${collectorId}'`;
  for (const key of template.keys) {
    const value = attributeValue(attributes, key);
    // Messages are made only on failure: this runs for every collector of a fleet.
    const referenced = () => template.where.get(key) ?? "its configuration";
    if (value === undefined) fail(`attributes.${key}`, `${collector()} has no attribute '${key}', which ${referenced()} references`);
    const unreadable = unwritableCharacter(value);
    if (unreadable)
      fail(`attributes.${key}`, `${collector()}'s attribute '${key}' (referenced by ${referenced()}) contains ${unreadable}, which no collector can read`);
    // Delivery would take it for a secret's marker and put that secret in.
    if (value.includes(MARKER_PREFIX))
      fail(
        `attributes.${key}`,
        `${collector()}'s attribute '${key}' (referenced by ${referenced()}) contains '${MARKER_PREFIX}', which is reserved for secrets`,
      );
  }
  for (const field of template.fields) {
    const filled = fillReferences(field.text, (key) => attributes[key]!);
    try {
      validate(field.schema, filled, "value", field.path);
    } catch (error) {
      if (!(error instanceof ValidationError)) throw error;
      fail(
        field.path,
        `filled in with the attributes of ${collector()} it reads ${JSON.stringify(filled)}, which ${error.details[0]?.message ?? "is not valid"}`,
      );
    }
  }
  return joinTemplate(template, attributes);
}

/**
 * The text with each reference replaced by the value of its key, quoted for
 * where it sits. The values were checked when the config was rendered
 * (`fillTemplate`); this is the step a stored config is filled by again.
 */
export function joinTemplate(template: TemplateText, values: Readonly<Record<string, string>>): string {
  const quoted = new Map<string, string>();
  let out = template.pieces[0]!;
  template.slots.forEach((slot, i) => {
    const id = `${slot.depth} ${slot.key}`;
    let text = quoted.get(id);
    if (text === undefined) {
      text = values[slot.key]!;
      for (let level = 1; level < slot.depth; level++) text = JSON.stringify(text).slice(1, -1);
      text = quotedOnce(template.runtime, text);
      quoted.set(id, text);
    }
    out += text + template.pieces[i + 1]!;
  });
  return out;
}
