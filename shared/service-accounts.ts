/**
 * Service accounts and the scopes they can be granted, as the REST API answers
 * them (/service-accounts, /scopes): declared once for the routes, the OpenAPI
 * document and the UI's Service accounts page.
 */
import { Type, type Static } from "@sinclair/typebox";
import { SCOPES } from "./access.ts";

export const ScopeSchema = Type.Union(
  SCOPES.map((s) => Type.Literal(s)),
  { errorMessage: `must be one of ${SCOPES.join(", ")}` },
);

export const ServiceAccountSchema = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    scopes: Type.Array(ScopeSchema),
    createdAt: Type.String({ format: "date-time" }),
    createdBy: Type.String(),
  },
  { title: "ServiceAccount" },
);
export type ServiceAccount = Static<typeof ServiceAccountSchema>;

/** POST /service-accounts: the account and its token, shown once. */
export const CreatedServiceAccountSchema = Type.Composite([ServiceAccountSchema, Type.Object({ token: Type.String({ description: "Shown once." }) })]);
export type CreatedServiceAccount = Static<typeof CreatedServiceAccountSchema>;

/** GET /scopes: every scope in a stable order, and the scope sets of the user roles. */
export const ScopesAnswerSchema = Type.Object({ items: Type.Array(ScopeSchema), roles: Type.Record(Type.String(), Type.Array(ScopeSchema)) });
export type ScopesAnswer = Static<typeof ScopesAnswerSchema>;

export const ServiceAccountListSchema = Type.Object({ items: Type.Array(ServiceAccountSchema) });
export type ServiceAccountList = Static<typeof ServiceAccountListSchema>;
