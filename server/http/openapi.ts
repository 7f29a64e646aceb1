/**
 * The OpenAPI 3.1 document, built from the route table: the very schemas that
 * validate requests describe them, so the document cannot drift from the code.
 */
import type { TSchema } from "@sinclair/typebox";
import type { Route } from "./route.ts";
import { ErrorBody } from "./schemas.ts";

const ERROR_STATUSES: Record<string, string> = {
  "400": "Validation failed; details name each bad field by path.",
  "401": "No valid credential (Bearer token or session cookie), or wrong login credentials.",
  "403": "The credential lacks the scope this operation needs, or a cookie-authenticated write lacks X-CSRF-Token (csrf_failed).",
  "404": "Unknown id.",
  "409": "Conflict with the current state.",
  "413": "Request body too large.",
  "415": "Body is not JSON.",
  "429": "Rate limited (rate_limited): the credential or address has used up its rate; retry after Retry-After seconds.",
  "503": "Overloaded or storage unavailable; retry after Retry-After seconds.",
  "507": "Storage full (storage_full): the embedded store's disk is full and nothing was stored; retry after Retry-After seconds once space is freed.",
};

/** Plain JSON Schema: drops TypeBox's symbol keys and `Type.Optional` markers. */
function plain(schema: TSchema): unknown {
  return JSON.parse(JSON.stringify(schema));
}

function operationId(route: Route): string {
  const words = route.path
    .split("/")
    .filter(Boolean)
    .map((part) => part.replace(/[{}]/g, "").replace(/-(\w)/g, (_, c: string) => c.toUpperCase()));
  return [route.method.toLowerCase(), ...words.map((w) => w.charAt(0).toUpperCase() + w.slice(1))].join("");
}

export function openApiDocument(routes: Route[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const parameters: unknown[] = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => ({
      name: m[1],
      in: "path",
      required: true,
      schema: { type: "string" },
    }));
    const query = route.query as { properties?: Record<string, TSchema>; required?: string[] } | undefined;
    for (const [name, schema] of Object.entries(query?.properties ?? {})) {
      parameters.push({ name, in: "query", required: query?.required?.includes(name) ?? false, schema: plain(schema) });
    }
    const responses: Record<string, unknown> = {
      [String(route.status)]:
        route.status === 204
          ? { description: "Done." }
          : {
              description: "Success.",
              content: route.produces
                ? { [route.produces]: { schema: { type: "string", format: "binary" } } }
                : { "application/json": { schema: route.response ? plain(route.response) : {} } },
            },
    };
    for (const [status, description] of Object.entries(ERROR_STATUSES)) {
      if ((status === "413" || status === "415") && !route.body) continue;
      responses[status] = { description, content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } };
    }
    // Scoped routes take a Bearer token or a UI session whose role holds the
    // scope; session-only routes take the cookie; public ones nothing.
    const security = route.scope !== null ? [{ bearer: [route.scope] }, { session: [route.scope] }] : route.session ? [{ session: [] }] : [];
    (paths[route.path] ??= {})[route.method.toLowerCase()] = {
      operationId: operationId(route),
      summary: route.summary,
      tags: [route.tag],
      security,
      ...(route.scope !== null ? { "x-required-scope": route.scope } : {}),
      // A GET that mints: the session cookie must send X-CSRF-Token here too.
      ...(route.csrf ? { "x-csrf-required": true } : {}),
      // A route's own body limit; the others take http.maxBodyBytes.
      ...(route.maxBodyBytes !== undefined ? { "x-max-body-bytes": route.maxBodyBytes } : {}),
      parameters,
      ...(route.body ? { requestBody: { required: !route.bodyOptional, content: { "application/json": { schema: plain(route.body) } } } } : {}),
      responses,
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "svc REST API",
      version,
      description:
        "Collector fleet management. Every operation but the public login calls and GET /session/status needs `Authorization: Bearer <token>` with the scope it names, or the web UI's `svc_session` cookie of a user whose role holds that scope (writes made with the cookie must send `X-CSRF-Token`).",
    },
    servers: [{ url: "/api/v1" }],
    paths,
    components: {
      schemas: { Error: plain(ErrorBody) },
      securitySchemes: {
        bearer: { type: "http", scheme: "bearer", description: "A service-account token (prefix svcsa_)." },
        session: {
          type: "apiKey",
          in: "cookie",
          name: "svc_session",
          description:
            "The web UI session set by POST /session. Calls other than GET and HEAD, and the GETs marked x-csrf-required (they mint a credential), must also send the session's csrfToken as X-CSRF-Token.",
        },
      },
    },
  };
}
