/** An audit log entry as GET /api/v1/audit answers it, for the route, its OpenAPI document and the UI's audit page. */
import { Type, type Static } from "@sinclair/typebox";

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
  },
  { title: "AuditEntry" },
);
export type AuditEntry = Static<typeof AuditEntrySchema>;
