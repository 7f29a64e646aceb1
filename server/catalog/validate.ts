/**
 * Validation of a component's `config` against its catalog type: defaults
 * filled in, then where attribute references stand (references.ts), the
 * schema (a sensitive field in any of its forms, see secrets/values.ts), then
 * the characters of every key and string value, then the type's own checks. Every problem names its key path from `root`,
 * e.g. `config.endpoint` or `configOverrides.tls.insecure`.
 */
import { Type, type TSchema } from "@sinclair/typebox";
import { Value } from "@sinclair/typebox/value";
import { ValidationError, type ErrorDetail } from "../errors.ts";
import { validate } from "../lib/validate.ts";
import {
  ENV_NAME,
  hasSensitive,
  isHostEnvRef,
  isPlainValue,
  isSecretRef,
  isSensitive,
  pathText,
  plainAllowed,
  sensitiveLeaves,
} from "../../shared/sensitive.ts";
import { MARKER_PREFIX } from "../secrets/values.ts";
import { mergeConfig } from "./merge.ts";
import { checkReferences } from "./references.ts";
import { findType } from "./registry.ts";
import type { ComponentKind } from "./types.ts";

/**
 * Returns the config with defaults applied; the input is not modified. A
 * sensitive field may hold a string (a new plaintext, checked against the
 * field's schema), `{secret: id}`, `{env: NAME}`, or, where the field allows
 * it, `{value, secret: false}`; each is returned as it was given.
 */
export function validateComponentConfig(kind: ComponentKind, type: string, config: unknown, root = "config"): Record<string, unknown> {
  const catalogType = findType(kind, type);
  if (catalogType === undefined) {
    throw new ValidationError(`Unknown ${kind} type '${type}'.`, [{ path: "type", message: `is not a ${kind} type of the catalog` }]);
  }
  return validateConfig(catalogType.schema, config, `${type} ${kind} config`, root, (valid) => catalogType.check?.(valid as never, root) ?? []);
}

/** What `validateComponentConfig` does for a catalog type, for any `schema` and rules `check` it cannot say. */
export function validateConfig(
  schema: TSchema,
  config: unknown,
  what: string,
  root: string,
  check: (valid: Record<string, unknown>) => ErrorDetail[] = () => [],
): Record<string, unknown> {
  const filled = Value.Default(schema, Value.Clone(config)) as Record<string, unknown>;
  const references = checkReferences(schema, filled, root);
  // A string holding an attribute reference meets its field's format only once filled in, per collector, when rendered.
  const problems = [
    ...references.problems,
    ...detailsOf(() => validate(formsAllowed(schema), filled, what, root)).filter((d) => !references.deferred.has(d.path)),
  ];
  for (const leaf of sensitiveLeaves(schema, filled)) {
    const at = pathText(root, leaf.path);
    if (!references.deferred.has(at)) problems.push(...sensitiveProblems(leaf.schema, leaf.value, at, what));
  }
  if (problems.length === 0) problems.push(...unwritableText(filled, root));
  if (problems.length === 0) problems.push(...check(filled));
  const first = problems[0];
  if (first) throw new ValidationError(`The ${what} is not valid: ${first.path}: ${first.message}.`, problems);
  return filled;
}

/** The problems `run` throws as a ValidationError, none when it returns. */
function detailsOf(run: () => unknown): ErrorDetail[] {
  try {
    run();
    return [];
  } catch (error) {
    if (error instanceof ValidationError) return error.details;
    throw error;
  }
}

const withForms = new WeakMap<TSchema, TSchema>();

/**
 * `schema` with every sensitive field taking any value, for the pass that
 * checks everything else; `sensitiveProblems` checks those fields on their
 * own. Only the containers on the way to a sensitive field are copied.
 */
function formsAllowed(schema: TSchema): TSchema {
  if (isSensitive(schema)) return Type.Any();
  if (!hasSensitive(schema)) return schema;
  let copy = withForms.get(schema);
  if (copy === undefined) {
    const s = schema as TSchema & { properties?: Record<string, TSchema>; patternProperties?: Record<string, TSchema>; items?: TSchema };
    const each = (children: Record<string, TSchema>) => Object.fromEntries(Object.entries(children).map(([k, v]) => [k, formsAllowed(v)]));
    copy = {
      ...s,
      ...(s.properties ? { properties: each(s.properties) } : {}),
      ...(s.patternProperties ? { patternProperties: each(s.patternProperties) } : {}),
      ...(s.items && !Array.isArray(s.items) ? { items: formsAllowed(s.items) } : {}),
    } as TSchema;
    withForms.set(schema, copy);
  }
  return copy;
}

/**
 * A value of a sensitive field that is none of its forms, or a plaintext
 * (bare, or marked not secret) its schema refuses. Messages carry the
 * schema's own words, never the value.
 */
function sensitiveProblems(schema: TSchema, value: unknown, at: string, what: string): ErrorDetail[] {
  if (typeof value === "string") return detailsOf(() => validate(schema, value, what, at));
  if (isSecretRef(value)) return [];
  if (isHostEnvRef(value)) {
    return ENV_NAME.test(value.env)
      ? []
      : [{ path: at, message: "must name an environment variable of the collector's host: a letter or _, then letters, digits or _" }];
  }
  if (isPlainValue(value)) {
    if (!plainAllowed(schema)) return [{ path: at, message: "is a credential and cannot be marked as not secret" }];
    return detailsOf(() => validate(schema, value.value, what, at));
  }
  const forms = ["a string", "{secret: <id>}", "{env: NAME}", ...(plainAllowed(schema) ? ["{value, secret: false}"] : [])];
  return [{ path: at, message: `must be ${forms.slice(0, -1).join(", ")} or ${forms.at(-1)!}` }];
}

/**
 * A collector's overrides merged over a record's config, validated as the
 * config the collector will run; problems are named from `root`.
 */
export function mergeOverrides(
  kind: ComponentKind,
  type: string,
  config: Record<string, unknown>,
  overrides: Record<string, unknown>,
  root = "configOverrides",
): Record<string, unknown> {
  return validateComponentConfig(kind, type, mergeConfig(config, overrides), root);
}

/**
 * Characters no runtime can take in a config string, keys included. Checked
 * against each runtime's reader:
 * - Go's gopkg.in/yaml.v3 3.0.1 (the collector's config decoder) refuses raw C0
 *   controls other than tab, LF and CR, DEL, C1 controls other than U+0085,
 *   and U+FFFE/U+FFFF ("control characters are not allowed", readerc.go); it
 *   takes U+0085, U+2028, U+2029 and CR as line breaks (is_break in
 *   yamlprivateh.go), which fold or end a
 *   scalar or a comment; a lone surrogate cannot be written in UTF-8 at all
 *   (its `\uD800` escape is "invalid Unicode character escape code").
 * - Alloy's scanner refuses U+FEFF anywhere but the start of a file ("illegal
 *   byte order mark", grafana/alloy syntax/scanner/scanner.go at 3ad0d812), and
 *   NUL ("illegal character NUL").
 * - Runtime O reads the config through OpAMP, Runtime R through HTTP; both
 *   carry UTF-8 only.
 * Tab and line feed stay allowed: OTTL takes both as whitespace between
 * tokens (a long condition may be written on several lines) and both are
 * escaped in every string the renderers write (`\t`, `\n`). Everything else
 * in the C0 range, CR included, has no use in any field (header values have
 * their own, stricter grammar in schemas.ts).
 */
const UNWRITABLE =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** The first character of `text` no runtime can take, described for a message, or undefined. */
export function unwritableCharacter(text: string): string | undefined {
  const found = UNWRITABLE.exec(text);
  if (!found) return undefined;
  const code = found[0].charCodeAt(0);
  const name =
    code === 0x2028
      ? "a line separator"
      : code === 0x2029
        ? "a paragraph separator"
        : code === 0xfeff
          ? "a byte order mark"
          : code >= 0xd800 && code <= 0xdfff
            ? "a lone surrogate"
            : code >= 0xfffe
              ? "a noncharacter"
              : "a control character";
  return `U+${code.toString(16).toUpperCase().padStart(4, "0")} (${name})`;
}

/** `text` with every character no runtime can take written as `\uXXXX`, for paths and comments. */
export function escapeUnwritable(text: string): string {
  return text.replace(new RegExp(UNWRITABLE.source, "g"), (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

const RESERVED = `'${MARKER_PREFIX}', which is reserved for redacted secrets`;

/**
 * One problem per key or string value under `value` holding a character no
 * runtime can take, or the start of a secret's marker: a redacted rendering
 * carries `<secret:<id>>` where a secret goes and delivery replaces every
 * such string, so no other text may look like one.
 */
export function unwritableText(value: unknown, path: string): ErrorDetail[] {
  if (typeof value === "string") {
    const found = unwritableCharacter(value);
    if (found) return [{ path, message: `contains ${found}, which no collector can read; use printable text (tab and line feed are allowed)` }];
    return value.includes(MARKER_PREFIX) ? [{ path, message: `contains ${RESERVED}` }] : [];
  }
  if (Array.isArray(value)) return value.flatMap((item, i) => unwritableText(item, `${path}[${i}]`));
  if (typeof value !== "object" || value === null) return [];
  return Object.entries(value).flatMap(([key, item]) => {
    const at = `${path}.${escapeUnwritable(key)}`;
    const found = unwritableCharacter(key);
    if (found) return [{ path: at, message: `is a key containing ${found}, which no collector can read; use printable text` }];
    if (key.includes(MARKER_PREFIX)) return [{ path: at, message: `is a key containing ${RESERVED}` }];
    return unwritableText(item, at);
  });
}
