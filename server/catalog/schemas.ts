/**
 * Schema pieces the catalog types share. Every object is closed so a typo in
 * a key is an error that names the key rather than a silently ignored field.
 */
import {
  Kind,
  Type,
  TypeRegistry,
  type ObjectOptions,
  type SchemaOptions,
  type TProperties,
  type TUnsafe,
} from "@sinclair/typebox";

/** A closed object. */
export function Closed<T extends TProperties>(properties: T, options: ObjectOptions = {}) {
  return Type.Object(properties, { additionalProperties: false, ...options });
}

const STRING_ENUM = "CatalogStringEnum";
if (!TypeRegistry.Has(STRING_ENUM)) {
  TypeRegistry.Set<{ enum: readonly string[] }>(STRING_ENUM, (schema, value) => typeof value === "string" && schema.enum.includes(value));
}

/**
 * A string from a fixed list, as plain JSON Schema `enum` (form UIs render a
 * select) with an error message that lists the choices.
 */
export function StringEnum<const T extends readonly string[]>(values: T, options: SchemaOptions = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({
    [Kind]: STRING_ENUM,
    type: "string",
    enum: values,
    errorMessage: `must be one of ${values.map((v) => `'${v}'`).join(", ")}`,
    ...options,
  });
}

/** `host:port` to listen on; an empty host means every interface. */
export function ListenAddress(options: SchemaOptions = {}) {
  return Type.String({
    pattern: "^\\S*:[0-9]{1,5}$",
    errorMessage: "must be host:port, e.g. 0.0.0.0:4317",
    ...options,
  });
}

/** An absolute http(s) URL. */
export function HttpUrl(options: SchemaOptions = {}) {
  return Type.String({
    pattern: "^https?://[^\\s/]+\\S*$",
    errorMessage: "must be an http:// or https:// URL",
    ...options,
  });
}

/** A Go/Prometheus duration such as `500ms`, `10s`, `1m30s`; zero allowed. */
export function Duration(options: SchemaOptions = {}) {
  return Type.String({
    pattern: "^([0-9]+(ms|s|m|h))+$",
    errorMessage: "must be a duration such as 500ms, 10s or 1m30s",
    ...options,
  });
}

/** A positive duration: how often something runs. */
export function Interval(options: SchemaOptions = {}) {
  return Type.String({
    pattern: "^(?=.*[1-9])([0-9]+(ms|s|m|h))+$",
    errorMessage: "must be a positive duration such as 15s or 1m",
    ...options,
  });
}

/**
 * RFC 9110 §5.1 field-name: a token (tchar = ALPHA / DIGIT / one of
 * ``!#$%&'*+-.^_`|~``).
 */
const HEADER_NAME = "^[A-Za-z0-9!#$%&'*+.^_`|~-]+$";

/**
 * RFC 9110 §5.5 field-value: field-vchar (VCHAR, or obs-text: any non-ASCII
 * character, which Go's net/http passes as UTF-8 bytes ≥ 0x80) with SP and
 * HTAB only between them; no CR, LF, NUL or other controls, no leading or
 * trailing whitespace. Go's HTTP transport refuses any other value on every
 * request (httpguts.ValidHeaderFieldValue), so it is refused here instead.
 */
const HEADER_VALUE = "^(?:[!-~\\u0080-\\uffff](?:[\\t -~\\u0080-\\uffff]*[!-~\\u0080-\\uffff])?)?$";

/** Extra HTTP/gRPC headers sent with every request, e.g. `Authorization`. */
export function Headers(options: SchemaOptions = {}) {
  return Type.Record(
    Type.String({ pattern: HEADER_NAME }),
    Type.String({
      maxLength: 8192,
      pattern: HEADER_VALUE,
      errorMessage: "must be a header value: visible characters with spaces or tabs between them, no line breaks or other control characters, no leading or trailing whitespace",
    }),
    {
      additionalProperties: false,
      default: {},
      description: "Headers sent with every request, e.g. Authorization.",
      errorMessage: "must map header names (letters, digits and !#$%&'*+-.^_`|~) to header values",
      ...options,
    },
  );
}

/** Headers in key order, so equal maps render to equal bytes whatever order they were stored in. */
export function sortedHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
