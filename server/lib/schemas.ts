/** Schemas that are not about HTTP: domain records and wire messages use them as much as routes do. */
import { Type } from "@sinclair/typebox";

export { DateTime, Nullable } from "../../shared/schema.ts";

/** A string-to-string map such as collector tags (at most 64 entries). */
export const StringMap = Type.Record(Type.String({ minLength: 1, maxLength: 128 }), Type.String({ maxLength: 1024 }), {
  maxProperties: 64,
});
