/** Schemas shared by many routes: the error shape, pagination, and ids (schemas that are not about HTTP are in shared/schema.ts). */
import { Type, type Static } from "@sinclair/typebox";

export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.String({ description: "Stable snake_case code, e.g. validation_failed, not_found." }),
      message: Type.String({ description: "A sentence for humans." }),
      details: Type.Array(
        Type.Object({
          path: Type.String(),
          message: Type.String(),
          id: Type.Optional(Type.String({ description: "The record this detail names, e.g. each candidate of an ambiguous_name." })),
          name: Type.Optional(Type.String({ description: "That record's name." })),
        }),
      ),
    }),
  },
  { title: "Error" },
);
/** The error shape as a client reads it. */
export type ErrorBody = Static<typeof ErrorBody>;

export const IdParam = Type.String({ minLength: 1, maxLength: 200 });

export const PageQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: "Page size (1–1000)." })),
  cursor: Type.Optional(Type.String({ maxLength: 512, description: "The nextCursor of the previous page." })),
};

/** Opaque cursors: the last id of a page, base64url-encoded. */
export function encodeCursor(id: string): string {
  return Buffer.from(id, "utf8").toString("base64url");
}

export function decodeCursor(cursor: string | undefined): string | undefined {
  return cursor === undefined ? undefined : Buffer.from(cursor, "base64url").toString("utf8");
}
