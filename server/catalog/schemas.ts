/**
 * Schema pieces the catalog types share. Every object is closed so a typo in
 * a key is an error that names the key rather than a silently ignored field.
 */
import { Kind, Type, TypeRegistry, type ObjectOptions, type SchemaOptions, type TProperties, type TSchema, type TUnsafe } from "@sinclair/typebox";
import { Sensitive } from "../../shared/sensitive.ts";
import { parseDuration, type DurationGrammar } from "./durations.ts";

/**
 * Schema keyword: the field takes no attribute reference (`{{attr "KEY"}}`,
 * shared/attribute-refs.ts), and the keyword's value says why. Set on every
 * field a rendering reads rather than copies into a string (a value compared,
 * parsed or used as a key), because a reference is filled in only after
 * rendering, in the rendered text; and on OTTL, which a collector's attribute
 * must never become.
 */
export const NO_REFERENCES = "noAttributeReferences";

/** `schema` marked as taking no attribute reference, for the reason `why`. */
export function NoReferences<T extends TSchema>(schema: T, why: string): T {
  // Copied with its descriptors: a duration's rule is kept in non-enumerable keys a spread would drop.
  const copy = Object.defineProperties({}, Object.getOwnPropertyDescriptors(schema)) as T;
  return Object.assign(copy, { [NO_REFERENCES]: why });
}

/** Why a host path takes no attribute reference (hostpaths.ts). */
export const HOST_PATH_REFERENCE = "a host path is checked against the host-path policy when it is saved, so it cannot depend on a collector's attributes";

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

/** The error_mode of an OTTL processor (filter, transform): what one `what` failing on a record does. */
export function OttlErrorMode(what: string) {
  return StringEnum(["ignore", "propagate", "silent"], {
    default: "ignore",
    description: `What ${what} that fails on a record does: ignore (log it), silent, or propagate (drop the batch).`,
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

const DURATION = "CatalogDuration";
interface DurationSchema {
  grammars: readonly DurationGrammar[];
  positive: boolean;
}
if (!TypeRegistry.Has(DURATION)) {
  TypeRegistry.Set<DurationSchema>(DURATION, (schema, value) => {
    if (typeof value !== "string") return false;
    const ns = parseDuration(value, schema.grammars);
    return ns !== null && (schema.positive ? ns > 0n : ns >= 0n);
  });
}

/**
 * Which grammars a duration field must satisfy: every program that parses
 * it on either runtime (see durations.ts), e.g. `["go", "prometheus"]` for a
 * value the collector's Prometheus config and Alloy's `time.Duration` both read.
 */
export interface DurationOptions extends SchemaOptions {
  grammars: readonly DurationGrammar[];
}

function durationSchema(positive: boolean, { grammars, ...options }: DurationOptions): TUnsafe<string> {
  const prometheus = grammars.includes("prometheus");
  const example = prometheus ? "15s, 1m or 1h30m (units h, m, s, ms, largest first)" : "500ms, 10s or 1m30s";
  const schema = Type.Unsafe<string>({
    [Kind]: DURATION,
    type: "string",
    errorMessage: `must be a ${positive ? "positive " : ""}duration such as ${example}`,
    ...options,
  });
  // What the check reads stays out of the JSON Schema served to forms, which has no such keywords.
  const rule: DurationSchema = { grammars, positive };
  for (const [key, value] of Object.entries(rule)) Object.defineProperty(schema, key, { value, enumerable: false });
  return schema;
}

/** A duration such as `500ms`, `10s`, `1m30s`; zero allowed. */
export function Duration(options: DurationOptions) {
  return durationSchema(false, options);
}

/** A positive duration: how often something runs. */
export function Interval(options: DurationOptions) {
  return durationSchema(true, options);
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

/**
 * gRPC metadata, stricter than HTTP: grpc-go (internal/metadata/metadata.go
 * ValidateMD, read at grpc/grpc-go 0ac1e02c) takes keys of `0-9a-z-_.` (the
 * exporter lower-cases them first) and, for keys not ending in `-bin`,
 * values of printable ASCII (0x20-0x7E) only; anything else fails every
 * export at run time.
 */
const GRPC_HEADER_NAME = "^[A-Za-z0-9_.-]+$";
const GRPC_HEADER_VALUE = "^(?:[!-~](?:[ -~]*[!-~])?)?$";

const HEADER_RULES = {
  http: {
    name: HEADER_NAME,
    value: HEADER_VALUE,
    names: "letters, digits and !#$%&'*+-.^_`|~",
    values: "visible characters with spaces or tabs between them, no line breaks or other control characters",
  },
  grpc: {
    name: GRPC_HEADER_NAME,
    value: GRPC_HEADER_VALUE,
    names: "letters, digits, - _ and . (gRPC metadata)",
    values: "printable ASCII with spaces between, as gRPC metadata requires",
  },
} as const;

/**
 * Extra headers sent with every request, e.g. `Authorization`: HTTP header
 * rules by default, gRPC metadata rules for a gRPC exporter. Values are
 * sensitive (kept in the vault, never in git or a read); one that is not
 * secret, such as a tenant id, may be marked so (`{value, secret: false}`).
 */
export function Headers(options: SchemaOptions & { protocol?: keyof typeof HEADER_RULES } = {}) {
  const { protocol = "http", ...rest } = options;
  const rules = HEADER_RULES[protocol];
  return Type.Record(
    Type.String({ pattern: rules.name }),
    Sensitive(
      Type.String({
        maxLength: 8192,
        pattern: rules.value,
        errorMessage: `must be a header value: ${rules.values}, no leading or trailing whitespace`,
      }),
      { plainAllowed: true },
    ),
    {
      additionalProperties: false,
      default: {},
      description: "Headers sent with every request, e.g. Authorization.",
      errorMessage: `must map header names (${rules.names}) to header values`,
      ...rest,
    },
  );
}

/** Headers in key order, so equal maps render to equal bytes whatever order they were stored in. */
export function sortedHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
