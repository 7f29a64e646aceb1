/** REST: /audit — the audit log, newest first. */
import { Type } from "@sinclair/typebox";
import type { Store } from "../store/store.ts";
import { route, type Route } from "../http/route.ts";
import { decodeCursor, encodeCursor, PageQuery } from "../http/schemas.ts";
import { AuditPageSchema } from "../../shared/audit.ts";
import { withTargets, type AuditTargetDeps } from "./audit-targets.ts";

const Instant = Type.String({ format: "date-time", errorMessage: "must be an ISO 8601 date-time such as 2026-01-31T00:00:00Z" });

const AuditQuery = Type.Object(
  {
    ...PageQuery,
    from: Type.Optional(Instant),
    to: Type.Optional(Instant),
    actor: Type.Optional(Type.String({ maxLength: 200 })),
    action: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: false },
);

/** What the /audit routes use. */
export interface AuditApiDeps extends AuditTargetDeps {
  store: Store;
}

export function auditRoutes(deps: AuditApiDeps): Route[] {
  return [
    route({
      method: "GET",
      path: "/audit",
      scope: "audit:read",
      tag: "audit",
      summary: "Audit entries, newest first, each naming the record it is about (`target`) where it is one; filter by time range [from, to), actor and action.",
      query: AuditQuery,
      response: AuditPageSchema,
      handler: async ({ query }) => {
        const limit = query.limit ?? 100;
        const iso = (value: string | undefined) => (value === undefined ? undefined : new Date(value).toISOString());
        const items = await deps.store.queryAudit({
          from: iso(query.from),
          to: iso(query.to),
          actor: query.actor,
          action: query.action,
          before: decodeCursor(query.cursor),
          limit: limit + 1,
        });
        const more = items.length > limit;
        if (more) items.pop();
        return { items: await withTargets(deps, items), nextCursor: more ? encodeCursor(items[items.length - 1]!.id) : null };
      },
    }),
  ];
}
