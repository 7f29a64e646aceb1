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
