/**
 * Sensitive fields as the forms edit them (the value model is
 * shared/sensitive.ts). A value there is one of:
 * - the read form of a stored secret, `{secret: true, set: true, updatedAt}`:
 *   sent back unchanged, it keeps the stored value (the UI never has it);
 * - a string: a new secret, typed into a write-only box;
 * - `{env: "NAME"}`: read from the collector host's environment;
 * - `{value, secret: false}`: plain text, where the schema allows it.
 * Pure functions, so the form components only render.
 */
import type { TSchema } from "@sinclair/typebox";
import { ENV_NAME, hasSensitive, isHostEnvRef, isKeepMarker, isPlainValue } from "../../../shared/sensitive.ts";
import { isRecord, type Schema } from "./schema.ts";

/** How a sensitive value is given: a secret, plain text, or the collector host's environment. */
export type SecretKind = "secret" | "plain" | "env";

export function secretKindOf(value: unknown): SecretKind {
  if (isHostEnvRef(value)) return "env";
  if (isPlainValue(value)) return "plain";
  return "secret";
}

/**
 * The value after switching to `kind`. Back to Secret restores the stored
 * one (nothing was sent yet), or takes the plain text typed so far, so a
 * value typed under the wrong kind need not be typed again; a secret's text
 * is never carried into a visible box.
 */
export function switchSecretKind(kind: SecretKind, value: unknown, stored: unknown): unknown {
  switch (kind) {
    case "secret":
      return isPlainValue(value) && value.value !== "" ? value.value : stored;
    case "plain":
      return { value: isPlainValue(value) ? value.value : "", secret: false };
    case "env":
      return { env: isHostEnvRef(value) ? value.env : "" };
  }
}

/**
 * What a form loaded into a sensitive field that stands for a stored secret
 * (its read form), so Keep and Undo can bring it back; undefined for a value
 * the form can show (plain text, an environment variable, nothing).
 */
export function storedSecret(value: unknown): unknown {
  return secretKindOf(value) === "secret" && value !== undefined && typeof value !== "string" ? value : undefined;
}

/** When a stored secret was last set, from its read form; null for any other value. */
export function secretChangedAt(value: unknown): string | null {
  return isKeepMarker(value) && isRecord(value) && typeof value.updatedAt === "string" ? value.updatedAt : null;
}

/** Why an environment variable name will not do, or null when it will. */
export function envNameProblem(name: string): string | null {
  if (name === "") return "Name the environment variable.";
  return ENV_NAME.test(name) ? null : "An environment variable name has letters, digits and _, and does not start with a digit.";
}

/**
 * Header names that usually carry a credential (`Authorization`, `X-Api-Key`,
 * `X-Auth-Token`, …), whatever their case: kept as plain text such a value
 * lands in git and in every read, so the form warns.
 */
const CREDENTIAL_NAME = /authorization|token|secret|password|(?:^|[-_])(?:api)?key$/i;

export function looksLikeCredential(name: string): boolean {
  return CREDENTIAL_NAME.test(name);
}

/**
 * A sensitive field's value in a one-line summary (lists, activations):
 * plain text as it is, an environment variable by name, anything else
 * (the read form, or plaintext a server from before secrets returned) as
 * "(secret)", never its text.
 */
export function sensitiveSummary(value: unknown): string {
  if (isPlainValue(value)) return value.value;
  if (isHostEnvRef(value)) return `(host env ${value.env})`;
  return "(secret)";
}

/** The top-level properties of an object schema that hold a sensitive field anywhere below them. */
export function sensitiveKeys(schema: Schema): string[] {
  // The catalog's schemas are TypeBox schemas sent as JSON: values.ts reads them the same way on both sides.
  return Object.entries(schema.properties ?? {})
    .filter(([, property]) => hasSensitive(property as TSchema))
    .map(([key]) => key);
}
