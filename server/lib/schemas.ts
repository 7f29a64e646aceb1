/** Schemas that are not about HTTP: domain records and wire messages use them as much as routes do. */
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
