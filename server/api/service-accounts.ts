/** REST: /service-accounts — API credentials with scope sets; the token is shown once. */
import { Type } from "@sinclair/typebox";
import type { ServiceAccounts } from "../auth/service-accounts.ts";
import { ROLES, SCOPES } from "../auth/scopes.ts";
import { route, type Route } from "../http/route.ts";
import { CreatedServiceAccountSchema, ScopesAnswerSchema, ScopeSchema as Scope, ServiceAccountListSchema } from "../../shared/service-accounts.ts";

const CreateBody = Type.Object(
  {
    name: Type.String({
      minLength: 1,
      maxLength: 100,
      pattern: "^[A-Za-z0-9][A-Za-z0-9._-]*$",
      errorMessage: "must be 1–100 letters, digits, '.', '_' or '-', starting with a letter or digit",
    }),
    scopes: Type.Array(Scope, { minItems: 1, maxItems: SCOPES.length * 2 }),
  },
  { additionalProperties: false },
);

/** What the /service-accounts routes use. */
export interface ServiceAccountsApiDeps {
  accounts: ServiceAccounts;
}

export function serviceAccountRoutes(deps: ServiceAccountsApiDeps): Route[] {
  return [
    route({
      method: "GET",
      path: "/scopes",
      scope: "users:admin",
      tag: "service accounts",
      summary: "Every scope a credential can hold, in a stable order, and the scope sets of the user roles: what a new service account may be granted.",
      response: ScopesAnswerSchema,
      handler: async () => ({ items: [...SCOPES], roles: ROLES }),
    }),
    route({
      method: "POST",
      path: "/service-accounts",
      scope: "users:admin",
      tag: "service accounts",
      summary: "Create a service account; its token is in this answer only. Only scopes the caller holds can be granted.",
      body: CreateBody,
      response: CreatedServiceAccountSchema,
      status: 201,
      handler: async ({ body, principal }) => {
        const { account, token } = await deps.accounts.create(principal, principal, body.name, body.scopes);
        return { ...account, token };
      },
    }),
    route({
      method: "GET",
      path: "/service-accounts",
      scope: "users:admin",
      tag: "service accounts",
      summary: "List service accounts (never their tokens).",
      response: ServiceAccountListSchema,
      handler: async () => ({ items: await deps.accounts.list() }),
    }),
    route({
      method: "DELETE",
      path: "/service-accounts/{id}",
      scope: "users:admin",
      tag: "service accounts",
      summary: "Delete a service account; its token stops working at once. Only a caller holding every scope of the account may (403 forbidden).",
      status: 204,
      handler: ({ params, principal }) => deps.accounts.delete(principal, params.id!),
    }),
  ];
}
