/**
 * Validation of a component's `config` against its catalog type: defaults
 * filled in, then the schema, then the type's own checks. Every problem names
 * its key path from `root`, e.g. `config.endpoint` or `configOverrides.tls.insecure`.
 */
import { Value } from "@sinclair/typebox/value";
import { ValidationError, type ErrorDetail } from "../errors.ts";
import { validate } from "../http/validate.ts";
import { mergeConfig } from "./merge.ts";
import { findType } from "./registry.ts";
import type { ComponentKind } from "./types.ts";

/** Returns the config with defaults applied; the input is not modified. */
export function validateComponentConfig(
  kind: ComponentKind,
  type: string,
  config: unknown,
  root = "config",
): Record<string, unknown> {
  const catalogType = findType(kind, type);
  if (catalogType === undefined) {
    throw new ValidationError(`Unknown ${kind} type '${type}'.`, [{ path: "type", message: `is not a ${kind} type of the catalog` }]);
  }
  const what = `${type} ${kind} config`;
  const filled = Value.Default(catalogType.schema, Value.Clone(config));
  const valid = validate(catalogType.schema, filled, what, root);
  const problems: ErrorDetail[] = catalogType.check?.(valid as never, root) ?? [];
  const first = problems[0];
  if (first) throw new ValidationError(`The ${what} is not valid: ${first.path}: ${first.message}.`, problems);
  return valid;
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
