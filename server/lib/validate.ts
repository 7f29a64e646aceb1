/**
 * Request validation against the same TypeBox schemas the OpenAPI document
 * is built from. Each problem is reported with its field path (`config.endpoint`).
 */
import { FormatRegistry, type Static, type TSchema } from "@sinclair/typebox";
import { TypeCompiler, type TypeCheck } from "@sinclair/typebox/compiler";
import { Value } from "@sinclair/typebox/value";
import { ValidationError, type ErrorDetail } from "../errors.ts";

/** TypeBox checks no string formats by itself; these are the ones our schemas use. */
FormatRegistry.Set(
  "date-time",
  (value) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i.test(value) && !Number.isNaN(Date.parse(value)),
);

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

function checker<T extends TSchema>(schema: T): TypeCheck<T> {
  let check = compiled.get(schema);
  if (!check) {
    check = TypeCompiler.Compile(schema);
    compiled.set(schema, check);
  }
  return check as TypeCheck<T>;
}

/** `/config/endpoint` → `config.endpoint`, `/items/0` → `items[0]`. */
export function pointerToPath(pointer: string, root: string): string {
  const parts = pointer
    .split("/")
    .slice(1)
    .map((p) => p.replaceAll("~1", "/").replaceAll("~0", "~"));
  let path = root;
  for (const part of parts) {
    path += /^\d+$/.test(part) ? `[${part}]` : path === "" ? part : `.${part}`;
  }
  return path === "" ? "(body)" : path;
}

/** Validates `value`; throws ValidationError naming every bad field (at most 20). */
export function validate<T extends TSchema>(schema: T, value: unknown, what: string, root = ""): Static<T> {
  const check = checker(schema);
  if (check.Check(value)) return value;
  const details: ErrorDetail[] = [];
  const seen = new Set<string>();
  for (const error of check.Errors(value)) {
    const path = pointerToPath(error.path, root);
    if (seen.has(path)) continue;
    seen.add(path);
    details.push({ path, message: describe(error.schema, error.message) });
    if (details.length >= 20) break;
  }
  const first = details[0];
  throw new ValidationError(first ? `The ${what} is not valid: ${first.path}: ${first.message}.` : `The ${what} is not valid.`, details);
}

/** A schema's own `errorMessage` wins over TypeBox's generic sentence. */
function describe(schema: TSchema, fallback: string): string {
  if (typeof schema.errorMessage === "string") return schema.errorMessage;
  return fallback.charAt(0).toLowerCase() + fallback.slice(1);
}

/** Query strings arrive as text: convert numbers and booleans where the schema asks, then validate. */
export function validateQuery<T extends TSchema>(schema: T, params: URLSearchParams): Static<T> {
  const raw: Record<string, string | string[]> = {};
  for (const key of new Set(params.keys())) {
    const values = params.getAll(key);
    const property = (schema as { properties?: Record<string, TSchema> }).properties?.[key];
    raw[key] = property?.type === "array" ? values : values[values.length - 1]!;
  }
  return validate(schema, Value.Convert(schema, raw), "query", "");
}
