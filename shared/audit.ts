/** An audit log entry as GET /api/v1/audit answers it, for the route, its OpenAPI document and the UI's audit page. */
import { Type, type Static } from "@sinclair/typebox";
import { NextCursor } from "./schema.ts";

export const AuditEntrySchema = Type.Object(
  {
    id: Type.String(),
    time: Type.String({ format: "date-time" }),
    actor: Type.String(),
    action: Type.String(),
    resource: Type.String(),
    resourceId: Type.Union([Type.String(), Type.Null()]),
    outcome: Type.Union([Type.Literal("success"), Type.Literal("failure"), Type.Literal("denied")]),
    details: Type.Record(Type.String(), Type.Unknown()),
    remoteAddr: Type.Union([Type.String(), Type.Null()]),
    target: Type.Optional(
      Type.Object(
        {
          name: Type.Union([Type.String(), Type.Null()], { description: "The record's name now; for a deleted one, the name the entry recorded, if any." }),
          deleted: Type.Boolean({ description: "The record no longer exists." }),
        },
        { description: "The record the entry is about, named (collectors, sources, destinations, pipelines, routes, users, service accounts)." },
      ),
    ),
    refs: Type.Optional(
      Type.Array(
        Type.Object({
          key: Type.String({ description: "The details key naming the record (sourceId, destinationId, pipelineId, collectorId)." }),
          kind: Type.Union([Type.Literal("source"), Type.Literal("destination"), Type.Literal("pipeline"), Type.Literal("collector")]),
          id: Type.String(),
          name: Type.Union([Type.String(), Type.Null()], { description: "Null: the record no longer exists." }),
        }),
        { description: "Other records the entry's details name by id, with their names now." },
      ),
    ),
  },
  { title: "AuditEntry" },
);
export type AuditEntry = Static<typeof AuditEntrySchema>;

export const AuditPageSchema = Type.Object({ items: Type.Array(AuditEntrySchema), nextCursor: NextCursor });
export type AuditPage = Static<typeof AuditPageSchema>;
