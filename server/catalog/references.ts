/**
 * Attribute references (`{{attr "KEY"}}`, shared/attribute-refs.ts) in
 * component configs: where they may stand, checked on write, and where they
 * stand in a config, with the schema of each place, for the render-time check
 * of the value once a collector's attributes are filled in.
 *
 * A reference may stand in a string value whose field accepts strings, unless
 * the field is marked `NoReferences` (schemas.ts): a value a rendering reads
 * rather than copies, or OTTL. Not in a key of any map, and not in a secret
 * (a secret is sealed as written and only its marker is rendered). A string
 * holding a reference is accepted when its field's format could hold once the
 * reference is filled in; the filled value is checked when a collector's
 * config is rendered (render/attributes.ts).
 */
import type { TSchema } from "@sinclair/typebox";
import { hasReferenceStart, parseReferences } from "../../shared/attribute-refs.ts";
import { isPlainValue, isSensitive, pathText, plainAllowed } from "../../shared/sensitive.ts";
import type { ErrorDetail } from "../errors.ts";
import { pointerToPath } from "../lib/validate.ts";
import { NO_REFERENCES } from "./schemas.ts";

/** One string value that holds `{{attr`. */
export interface TemplatedLeaf {
  /** Keys from the config's root; for a value marked not secret (`{value, secret: false}`), the field's path. */
  path: string[];
  text: string;
  /** The schema of its place; undefined where the config has a key its schema does not know. */
  schema: TSchema | undefined;
  /** In a sensitive field and not a value it may mark as not secret: a secret, where no reference is filled in. */
  secret: boolean;
}

type Walkable = TSchema & {
  properties?: Record<string, TSchema>;
  patternProperties?: Record<string, TSchema>;
  additionalProperties?: boolean | TSchema;
  items?: TSchema | TSchema[];
  anyOf?: TSchema[];
};

/** The member of a union that takes `value`'s JSON type, or the schema itself. */
function branch(schema: Walkable, value: unknown): Walkable {
  if (!schema.anyOf) return schema;
  const type = Array.isArray(value) ? "array" : value === null ? "null" : typeof value === "object" ? "object" : typeof value;
  return (schema.anyOf.find((s) => s.type === type) as Walkable | undefined) ?? schema;
}

function child(schema: Walkable | undefined, key: string): Walkable | undefined {
  if (schema === undefined) return undefined;
  const own = schema.properties?.[key];
  if (own) return own as Walkable;
  for (const [pattern, s] of Object.entries(schema.patternProperties ?? {})) if (new RegExp(pattern, "u").test(key)) return s as Walkable;
  return typeof schema.additionalProperties === "object" ? (schema.additionalProperties as Walkable) : undefined;
}

/** Every string under `value` (keys aside) that holds `{{attr`, beside its place in `schema`. */
export function templatedLeaves(schema: TSchema | undefined, value: unknown, path: string[] = []): TemplatedLeaf[] {
  const s = schema === undefined ? undefined : branch(schema as Walkable, value);
  if (typeof value === "string") {
    return hasReferenceStart(value) ? [{ path, text: value, schema: s, secret: s !== undefined && isSensitive(s) }] : [];
  }
  if (s !== undefined && isSensitive(s) && isPlainValue(value)) {
    return hasReferenceStart(value.value) ? [{ path, text: value.value, schema: s, secret: !plainAllowed(s) }] : [];
  }
  if (Array.isArray(value)) {
    const items = s?.items !== undefined && !Array.isArray(s.items) ? (s.items as Walkable) : undefined;
    return value.flatMap((item, i) => templatedLeaves(items, item, [...path, String(i)]));
  }
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([key, item]) => templatedLeaves(child(s, key), item, [...path, key]));
}

/** Whether a field's schema takes a string (or a union with a string in it). */
function takesString(schema: TSchema): boolean {
  const s = schema as Walkable;
  return s.type === "string" || (s.anyOf ?? []).some((member) => member.type === "string");
}

export interface ReferenceCheck {
  /** Misplaced or malformed references, each named by its path. */
  problems: ErrorDetail[];
  /** Paths (from `root`) of strings holding well-formed references in a field that takes them: their format is checked once filled in. */
  deferred: Set<string>;
}

/** The references in a config, as a write may hold them (see the module comment). */
export function checkReferences(schema: TSchema, config: unknown, root: string): ReferenceCheck {
  const problems = keyProblems(config, root);
  const deferred = new Set<string>();
  for (const leaf of templatedLeaves(schema, config)) {
    const at = placeOf(leaf, root);
    const parsed = parseReferences(leaf.text);
    if (parsed.problem) {
      problems.push({ path: at, message: parsed.problem.message });
      continue;
    }
    // A place the schema does not know, or a type other than a string: the schema's own error says so.
    if (leaf.schema === undefined || !takesString(leaf.schema)) continue;
    const why = (leaf.schema as Record<string, unknown>)[NO_REFERENCES];
    if (typeof why === "string") problems.push({ path: at, message: `cannot hold an attribute reference: ${why}` });
    else if (leaf.secret) problems.push({ path: at, message: secretMessage(leaf.schema) });
    else deferred.add(at);
  }
  return { problems, deferred };
}

/**
 * A leaf's path as the validation of its field names it: a sensitive field's
 * with dots (validate.ts checks those fields on their own), any other as the
 * schema validation does, with list indexes in brackets.
 */
function placeOf(leaf: TemplatedLeaf, root: string): string {
  return leaf.schema !== undefined && isSensitive(leaf.schema) ? pathText(root, leaf.path) : keyPath(root, leaf.path);
}

/** Keys from `root` as the API names a place: `config.targets[0]`. */
export function keyPath(root: string, path: readonly string[]): string {
  return pointerToPath(path.map((p) => `/${p.replaceAll("~", "~0").replaceAll("/", "~1")}`).join(""), root);
}

function secretMessage(schema: TSchema): string {
  return plainAllowed(schema)
    ? "is stored as a secret, which is never filled in per collector: to use an attribute reference, mark the value as not secret ({value, secret: false})"
    : "is a credential, stored as a secret, which is never filled in per collector: it cannot hold an attribute reference";
}

/** A map key holding `{{attr`: references are filled in values only. */
function keyProblems(value: unknown, path: string): ErrorDetail[] {
  if (Array.isArray(value)) return value.flatMap((item, i) => keyProblems(item, `${path}[${i}]`));
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([key, item]) =>
    hasReferenceStart(key)
      ? [{ path: `${path}.${key}`, message: "is a key holding an attribute reference, which is filled in only in values" }]
      : keyProblems(item, `${path}.${key}`),
  );
}
