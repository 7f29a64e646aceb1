/**
 * Schema helpers every contract in `shared/` builds on. The server's route
 * schemas use the same ones, so a shape reads the same in the OpenAPI document
 * whichever side declared it.
 */
import { Type, type TSchema } from "@sinclair/typebox";

export const DateTime = Type.String({ format: "date-time" });

/** The schema or null. */
export function Nullable<T extends TSchema>(schema: T) {
  return Type.Union([schema, Type.Null()]);
}

/** A string-to-string map such as collector tags (at most 64 entries). */
export const StringMap = Type.Record(Type.String({ minLength: 1, maxLength: 128 }), Type.String({ maxLength: 1024 }), {
  maxProperties: 64,
});

/** A list answer's cursor for the next page; null on the last page. */
export const NextCursor = Type.Union([Type.String(), Type.Null()]);
