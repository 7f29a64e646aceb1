/**
 * A route declares everything the edge needs: method, path, the one scope it
 * requires, and the schemas of its query, body and answer. The router, the
 * auth check, validation and the OpenAPI document all read these fields.
 */
import type { Static, TSchema } from "@sinclair/typebox";
import type { Logger } from "pino";
import type { Principal } from "../auth/service-accounts.ts";
import type { Scope } from "../auth/scopes.ts";

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

type Infer<S> = S extends TSchema ? Static<S> : undefined;

export interface RequestContext<B = unknown, Q = unknown> {
  req: Request;
  url: URL;
  params: Record<string, string>;
  query: Q;
  body: B;
  /** On a public route (scope null, session false) an "anonymous" principal with no scopes. */
  principal: Principal;
  /** The browser reached us over TLS (directly, or through a trusted proxy's X-Forwarded-Proto). */
  secure: boolean;
  requestId: string;
  log: Logger;
  /**
   * A further scope this call's input needs beyond the route's (an opamp
   * token from POST /enrollment-tokens needs collectors:enroll): 403, audited
   * as auth.denied like the route's own scope, when the principal lacks it.
   */
  requireScope(scope: Scope): Promise<void>;
}

export interface RouteSpec<B extends TSchema | undefined, Q extends TSchema | undefined> {
  method: Method;
  /** Relative to /api/v1, with `{name}` parameters. */
  path: string;
  /**
   * The one scope the route needs. null: no scope — the route is public
   * (no credential looked at) unless `session` is set.
   */
  scope: Scope | null;
  /** With scope null: needs a web UI session cookie (no Bearer token), e.g. GET /session. */
  session?: boolean;
  summary: string;
  tag: string;
  body?: B;
  /** The body may be left out (no bytes at all); the handler then gets undefined. */
  bodyOptional?: boolean;
  /** May run longer than `http.idleTimeoutSeconds` (rendering a whole fleet): the idle timeout is lifted for it. */
  slow?: boolean;
  query?: Q;
  response?: TSchema;
  /** Success status; 204 sends no body. */
  status?: 200 | 201 | 202 | 204;
  /** Overrides http.maxBodyBytes for a route that takes large inputs. */
  maxBodyBytes?: number;
  /** The media type of a binary success answer (the handler returns a Response), for the OpenAPI document. */
  produces?: string;
  /**
   * While storage is unreachable a credential cannot be checked; such a route
   * then still runs for a caller who sent one, as an anonymous principal. Only
   * for health, which must be able to say that storage is down.
   */
  answersWithoutStorage?: boolean;
  /**
   * The call changes state (mints a credential) though its method is GET: a
   * caller with the session cookie must send X-CSRF-Token as on a write. Only
   * for GET /collectors/snippet, kept as a GET for existing clients.
   */
  csrf?: boolean;
  /** The call checks or sets a password (argon2): each is taken from the address's rateLimit.passwords. */
  checksPassword?: boolean;
  handler(ctx: RequestContext<Infer<B>, Infer<Q>>): Promise<unknown>;
}

export interface Route {
  method: Method;
  path: string;
  scope: Scope | null;
  session?: boolean;
  summary: string;
  tag: string;
  body?: TSchema;
  bodyOptional?: boolean;
  slow?: boolean;
  query?: TSchema;
  response?: TSchema;
  status: number;
  maxBodyBytes?: number;
  answersWithoutStorage?: boolean;
  produces?: string;
  csrf?: boolean;
  checksPassword?: boolean;
  handler(ctx: RequestContext): Promise<unknown>;
}

export function route<B extends TSchema | undefined = undefined, Q extends TSchema | undefined = undefined>(spec: RouteSpec<B, Q>): Route {
  return { ...spec, status: spec.status ?? 200, handler: spec.handler as Route["handler"] } as Route;
}
