/**
 * How SchemaForm reads a JSON Schema: which editor each property gets, the
 * value a new form starts from (the schema's defaults, so the user sees what
 * the server would fill in), and which field shows an error the API names by
 * path (`config.grpc.endpoint`, `config.include[1]`). Pure functions, so the
 * form component only renders.
 */

/** The parts of JSON Schema the form understands; anything else is edited as JSON. */
export interface Schema {
  type?: string | string[];
  title?: string;
  description?: string;
  default?: unknown;
  enum?: unknown[];
  /** Labelled choices: `oneOf: [{const, title}]`. */
  oneOf?: Schema[];
  const?: unknown;
  /** Alternatives; only a union of plain values (string, number, boolean) gets its own editor. */
  anyOf?: Schema[];
  properties?: Record<string, Schema>;
  required?: string[];
  patternProperties?: Record<string, Schema>;
  additionalProperties?: boolean | Schema;
  items?: Schema;
  minimum?: number;
  maximum?: number;
  /** The field carries a credential (shared/sensitive.ts): edited write-only, see secrets.ts. */
  sensitive?: boolean;
  /** A sensitive field's value may be marked as not secret. */
  plainAllowed?: boolean;
}

export type FieldKind =
  | "string"
  | "number"
  | "integer"
  | "boolean"
  | "choice"
  | "scalar"
  | "stringList"
  | "choiceList"
  | "objectList"
  | "object"
  | "stringMap"
  | "secret"
  | "secretMap"
  | "json";

export type ConfigValue = Record<string, unknown>;

export interface Choice {
  value: string;
  label: string;
}

/** The choices of an enum, or of a oneOf whose members are all labelled consts; null when neither. */
export function choices(schema: Schema): Choice[] | null {
  if (Array.isArray(schema.enum) && schema.enum.every((v) => typeof v === "string")) {
    return (schema.enum as string[]).map((value) => ({ value, label: value }));
  }
  if (Array.isArray(schema.oneOf) && schema.oneOf.every((s) => typeof s.const === "string")) {
    return schema.oneOf.map((s) => ({ value: s.const as string, label: s.title ?? (s.const as string) }));
  }
  return null;
}

/** The map's value schema when the object is a free string→string map (e.g. headers), else null. */
export function mapValues(schema: Schema): Schema | null {
  if (schema.properties && Object.keys(schema.properties).length > 0) return null;
  const patterns = Object.values(schema.patternProperties ?? {});
  const extra = typeof schema.additionalProperties === "object" ? [schema.additionalProperties] : [];
  const values = [...patterns, ...extra];
  return values.length > 0 && values.every((v) => v.type === "string" && !choices(v)) ? values[0]! : null;
}

const PLAIN = new Set<unknown>(["string", "number", "integer", "boolean"]);

/** A string, number or boolean (e.g. an attribute action's value): typed as text, so it is sent as a string. */
function isScalar(schema: Schema): boolean {
  const options = schema.anyOf ?? [];
  return options.length > 0 && options.every((s) => PLAIN.has(s.type)) && options.some((s) => s.type === "string");
}

export function fieldKind(schema: Schema): FieldKind {
  if (schema.sensitive === true) return "secret";
  if (choices(schema)) return "choice";
  if (isScalar(schema)) return "scalar";
  switch (schema.type) {
    case "string":
    case "number":
    case "integer":
    case "boolean":
      return schema.type;
    case "array":
      if (schema.items?.type === "string") return choices(schema.items) ? "choiceList" : "stringList";
      return schema.items && fieldKind(schema.items) === "object" ? "objectList" : "json";
    case "object":
      if (schema.properties && Object.keys(schema.properties).length > 0) return "object";
      return mapValues(schema)?.sensitive === true ? "secretMap" : mapValues(schema) ? "stringMap" : "json";
    default:
      return "json";
  }
}

/** `start_at` → `Start at`; a schema title wins. */
export function labelOf(key: string, schema: Schema): string {
  if (schema.title) return schema.title;
  const words = key
    .replace(/[_-]+/g, " ")
    .replace(/([a-z])([A-Z])/g, "$1 $2")
    .trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** The path the API uses for a key under `parent` (`config` + `endpoint` → `config.endpoint`). */
export function childPath(parent: string, key: string): string {
  return parent === "" ? key : `${parent}.${key}`;
}

/** The path of a list's item (`config.actions` + 0 → `config.actions[0]`). */
export function itemPath(list: string, index: number): string {
  return `${list}[${index}]`;
}

/** A DOM id for a field path, unique within one form (`prefix`). */
export function fieldId(prefix: string, path: string): string {
  return `${prefix}-${path.replace(/[^A-Za-z0-9_-]+/g, "-").replace(/-$/, "")}`;
}

function clone<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/**
 * The form's starting value: `given` where set, else each property's default
 * (nested objects filled the same way); a required list starts with one empty
 * item (a list of objects with one item of its defaults) so there is a box to type in.
 */
export function initialValue(schema: Schema, given: ConfigValue = {}): ConfigValue {
  const value: ConfigValue = clone(given);
  for (const [key, property] of Object.entries(schema.properties ?? {})) {
    if (value[key] === undefined && property.default !== undefined) value[key] = clone(property.default);
    if (fieldKind(property) === "object") {
      const current = value[key];
      if (current === undefined && !schema.required?.includes(key)) continue;
      value[key] = initialValue(property, isRecord(current) ? current : {});
    } else if (value[key] === undefined && schema.required?.includes(key)) {
      if (fieldKind(property) === "stringList") value[key] = [""];
      if (fieldKind(property) === "objectList") value[key] = [initialValue(property.items!)];
    }
  }
  return value;
}

export function isRecord(value: unknown): value is ConfigValue {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** `config.include[1].x` → ["config", "include", 1, "x"]. */
function segments(path: string): (string | number)[] {
  const parts: (string | number)[] = [];
  for (const match of path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) {
    parts.push(match[2] !== undefined ? Number(match[2]) : match[1]!);
  }
  return parts;
}

/**
 * The path of the field that shows an error at `path`: the deepest field the
 * form renders on the way down (a list shows its items' errors, a list of
 * objects goes on into its items' fields, a JSON box shows everything inside
 * it). Null when the path is not under `root`.
 */
export function errorTarget(schema: Schema, root: string, path: string): string | null {
  const rootParts = root === "" ? [] : segments(root);
  const parts = segments(path);
  if (rootParts.some((part, i) => parts[i] !== part)) return null;
  const rest = parts.slice(rootParts.length);
  let at = schema;
  let target = root;
  for (let i = 0; i < rest.length; i++) {
    const part = rest[i]!;
    const next = typeof part === "string" ? at.properties?.[part] : undefined;
    if (!next) return target === root ? (typeof part === "string" ? childPath(root, part) : null) : target;
    target = childPath(target, part as string);
    const kind = fieldKind(next);
    const index = rest[i + 1];
    if (kind === "objectList" && typeof index === "number") {
      target = itemPath(target, index);
      at = next.items!;
      i++;
      continue;
    }
    if (kind !== "object") return target;
    at = next;
  }
  return target === root ? null : target;
}
