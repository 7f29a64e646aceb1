/**
 * The HTTP edge: one Bun.serve for the REST API, the load-balancer probes
 * and (by path) the collector and agent channels and the web UI. For every
 * API call it matches the route, authenticates, checks the route's scope,
 * validates query and body, runs the handler and answers JSON, with a request
 * id on the answer and in the log line.
 */
import type { Server } from "bun";
import type { Logger } from "pino";
import { credentialKind, type AuthFailureBursts } from "../auth/failure-bursts.ts";
import type { Scope } from "../auth/scopes.ts";
import type { Principal, ServiceAccounts } from "../auth/service-accounts.ts";
import { sessionCookie } from "../auth/sessions.ts";
import { bearerToken, stringsEqual, tokenKind } from "../auth/tokens.ts";
import type { Users } from "../auth/users.ts";
import { auditEntry } from "../audit/audit.ts";
import type { ServerConfig } from "../config/load.ts";
import { AppError, ForbiddenError, StorageUnavailableError, UnauthenticatedError, ValidationError } from "../errors.ts";
import type { Store } from "../store/store.ts";
import { UiServer } from "../ui/serve.ts";
import { METRICS_PATH, metricsResponse } from "../metrics/exposition.ts";
import type { RouteSeries, ServerMetrics } from "../metrics/metrics.ts";
import { channelFor, type Channel, type ChannelSocket, type SocketData } from "../channel/channel.ts";
import { readBytes, readJson } from "../lib/body.ts";
import { json } from "../lib/json.ts";
import { validate, validateQuery } from "../lib/validate.ts";
import { VERSION } from "../version.ts";
import { Cors } from "./cors.ts";
import { EdgeLimits } from "./limits.ts";
import { applySecurityHeaders } from "./headers.ts";
import { openApiDocument } from "./openapi.ts";
import { errorResponse } from "./respond.ts";
import type { RequestContext, Route } from "./route.ts";
import { type Match as RouteMatch, Router } from "./router.ts";

const API_PREFIX = "/api/v1";
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
/** Load-balancer probes answer even when the connection cap is reached. */
const PROBES = new Set(["/healthz", "/readyz"]);

export interface HttpServer {
  url: URL;
  server: Server<SocketData>;
  /**
   * Stops accepting, lets in-flight requests finish, then resolves. Open WebSockets and
   * server-sent-event answers would hold it forever: their owners end them first.
   */
  stop(): Promise<void>;
  /**
   * Start-up is complete (first accounts created): /readyz may answer 200.
   * Until then it answers 503, so a load balancer or script that waits for
   * readiness never meets a replica whose admin credential does not exist yet.
   */
  markStarted(): void;
}

/** What the edge uses. */
export interface HttpDeps {
  config: ServerConfig;
  logger: Logger;
  store: Store;
  accounts: ServiceAccounts;
  users: Users;
  /** The collector and agent channels served beside the API; they are started and stopped by their owner. */
  channels: Channel[];
  /** Counts 401 answers; started and stopped by its owner, so the edge only records. */
  authFailures: AuthFailureBursts;
  /** The server's own metrics (server/metrics/): the edge times requests and counts sessions, messages and auth failures. */
  metrics: ServerMetrics;
}

/**
 * `storageStatus` (api/system.ts's, which health answers with too) decides
 * /readyz once start-up is complete; it is passed in so the edge does not import an endpoint.
 */
export function startHttpServer(deps: HttpDeps, routes: Route[], storageStatus: () => Promise<{ status: "up" | "down" }>): HttpServer {
  const { config, logger, channels, authFailures } = deps;
  const trustedProxies = new Set(config.http.trustedProxies);
  const router = new Router(routes);
  const cors = new Cors(config.security.cors.allowedOrigins, config.externalUrl);
  const openapi = JSON.stringify(openApiDocument(routes, VERSION));
  const ui = new UiServer();
  const limits = new EdgeLimits(deps);
  let started = false;
  // Metrics: every label's series looked up here, once, so a request costs a map lookup (server/metrics/).
  const { metrics } = deps;
  const apiSeries = new Map(routes.map((route) => [route, metrics.route(API_PREFIX + route.path)]));
  const series = {
    healthz: metrics.route("/healthz"),
    readyz: metrics.route("/readyz"),
    metrics: metrics.route(METRICS_PATH),
    openapi: metrics.route(API_PREFIX + "/openapi.json"),
    preflight: metrics.route(API_PREFIX + " (CORS preflight)"),
    ui: metrics.route("/ui/"),
    unmatched: metrics.route("unmatched"),
  };
  // By name: a channel may be replaced in the list while serving (tests swap one for a stricter copy).
  const channelSeries = new Map(channels.map((channel) => [channel.name, { ...metrics.channel(channel.name), duration: metrics.route(channel.path) }]));
  const seriesOf = (channel: Channel) => {
    let counted = channelSeries.get(channel.name);
    if (!counted) channelSeries.set(channel.name, (counted = { ...metrics.channel(channel.name), duration: metrics.route(channel.path) }));
    return counted;
  };

  /** GET /metrics on this listener: a Bearer token with health:read (the unauthenticated one is metrics.listen). */
  async function scrape(req: Request, remoteAddr: string | null): Promise<Response> {
    limits.checkAddress(req, remoteAddr);
    const token = bearerToken(req.headers.get("authorization"));
    if (token === null) throw new UnauthenticatedError("GET /metrics needs a Bearer token with the health:read scope (or scrape the metrics.listen address).");
    const principal = await deps.accounts.authenticate(token, remoteAddr);
    if (!principal) throw new UnauthenticatedError("The Bearer token is not valid, or has been revoked.");
    limits.takeCall(principal);
    await requireScope(principal, "health:read", `GET ${METRICS_PATH}`);
    return metricsResponse(metrics, req);
  }

  /** Throws 403 when the principal lacks `scope`, after auditing the refusal (`what`: the call refused). */
  async function requireScope(principal: Principal, scope: Scope, what: string): Promise<void> {
    if (principal.scopes.has(scope)) return;
    await deps.store.write([], [auditEntry(principal, "auth.denied", "route", what, { scope }, "denied")]);
    throw new ForbiddenError(scope);
  }

  /**
   * A Bearer token first (service accounts; no CSRF, browsers never send one
   * by themselves); else the UI's session cookie, whose writes (anything but
   * GET and HEAD, and a GET that mints) must echo the session's CSRF token in X-CSRF-Token.
   */
  async function authenticate(req: Request, remoteAddr: string | null, route: Route): Promise<Principal> {
    const token = bearerToken(req.headers.get("authorization"));
    if (token !== null) {
      const principal = await deps.accounts.authenticate(token, remoteAddr);
      if (!principal) throw new UnauthenticatedError("The Bearer token is not valid, or has been revoked.");
      return principal;
    }
    const cookie = sessionCookie(req.headers.get("cookie"));
    if (cookie === null) throw new UnauthenticatedError("A valid Bearer token or a web UI session is required.");
    const principal = await deps.users.authenticate(cookie, remoteAddr);
    if (!principal) throw new UnauthenticatedError("The session has ended or is not valid; log in again.");
    if ((req.method !== "GET" && req.method !== "HEAD") || route.csrf) {
      const sent = req.headers.get("x-csrf-token");
      if (sent === null || !stringsEqual(sent, principal.session!.csrfToken)) {
        throw new AppError(403, "csrf_failed", "A call made with the session cookie must send the session's CSRF token in X-CSRF-Token.");
      }
    }
    return principal;
  }

  // The match is made by the caller, which labels the request's metrics with the route.
  async function handleApi(
    req: Request,
    server: Server<SocketData>,
    url: URL,
    remoteAddr: string | null,
    secure: boolean,
    requestId: string,
    log: Logger,
    { route, params }: RouteMatch,
  ) {
    let principal: Principal;
    const anonymous: Principal = { kind: "anonymous", id: "", name: "anonymous", scopes: new Set(), actor: "anonymous", remoteAddr };
    // An address that failed to authenticate too often waits, on the public log-in calls too.
    limits.checkAddress(req, remoteAddr);
    if (route.checksPassword) limits.takePasswordAttempt(req, remoteAddr);
    if (route.scope === null && !route.session) {
      // Public (log in, redeem a link): no credential is looked at.
      principal = anonymous;
    } else {
      principal = await authenticate(req, remoteAddr, route).catch((error) => {
        // No credential can be checked while storage is down; health still answers, to say so.
        if (route.answersWithoutStorage && error instanceof StorageUnavailableError) return anonymous;
        throw error;
      });
      if (principal !== anonymous) limits.takeCall(principal);
      if (principal === anonymous) {
        // Storage is down and the route answers anyway: nothing to check the principal against.
      } else if (route.scope === null) {
        if (principal.kind !== "user") throw new UnauthenticatedError("This call needs a web UI session (the svc_session cookie).");
      } else {
        await requireScope(principal, route.scope, `${route.method} ${route.path}`);
      }
    }
    const query = route.query ? validateQuery(route.query, url.searchParams) : {};
    let body: unknown;
    if (route.body) {
      const raw = await readJson(req, route.maxBodyBytes ?? config.http.maxBodyBytes);
      if (raw === undefined) {
        if (!route.bodyOptional) throw new ValidationError("A JSON request body is required.");
      } else {
        body = validate(route.body, raw, "request body");
      }
    } else if (req.body) {
      // A route that takes no body still bounds one sent anyway.
      await readBytes(req, route.maxBodyBytes ?? config.http.maxBodyBytes);
    }
    const further = (scope: Scope) => requireScope(principal, scope, `${route.method} ${route.path}`);
    const ctx: RequestContext = { req, url, params, query, body, principal, secure, requestId, log, requireScope: further };
    // A fleet's publish may take longer than the idle timeout, which would drop the caller's connection mid-answer.
    if (route.slow) server.timeout(req, 0);
    const result = await route.handler(ctx);
    // A handler that streams (server-sent events) builds its own answer.
    if (result instanceof Response) return result;
    return route.status === 204 ? new Response(null, { status: 204 }) : json(result, route.status);
  }

  async function fetch(req: Request, server: Server<SocketData>): Promise<Response | undefined> {
    const arrived = performance.now();
    const url = new URL(req.url);
    const incomingId = req.headers.get("x-request-id");
    const requestId = incomingId !== null && REQUEST_ID.test(incomingId) ? incomingId : Bun.randomUUIDv7();
    const remoteAddr = server.requestIP(req)?.address ?? null;
    // A child logger per request is made only when something logs: collector
    // polls arrive by the ten thousand per second and mostly log nothing.
    let child: Logger | undefined;
    const log = () => (child ??= logger.child({ reqId: requestId }));
    const origin = req.headers.get("origin");
    let response: Response;
    let channel: Channel | undefined;
    let api = false;
    // Over TLS: served directly with tls.*, or a trusted proxy says so. Decides
    // WebSocket admission for collectors and the cookie's Secure attribute.
    const forwarded = remoteAddr !== null && trustedProxies.has(remoteAddr) && req.headers.get("x-forwarded-proto") === "https";
    const secure = config.tls !== null || forwarded;
    // Which svc_http_request_duration_seconds series the answer goes to; a WebSocket upgrade goes to none.
    let timed: RouteSeries = series.unmatched;
    try {
      if (!PROBES.has(url.pathname)) limits.admit(server);
      if (url.pathname === "/healthz") {
        timed = series.healthz;
        response = new Response("ok\n", { headers: { "Content-Type": "text/plain" } });
      } else if (url.pathname === "/readyz") {
        timed = series.readyz;
        const ready = started && (await storageStatus()).status === "up";
        response = new Response(ready ? "ready\n" : "not ready\n", { status: ready ? 200 : 503 });
      } else if (url.pathname === METRICS_PATH) {
        timed = series.metrics;
        response = await scrape(req, remoteAddr);
      } else if ((channel = channelFor(channels, url.pathname))) {
        const counted = seriesOf(channel);
        timed = counted.duration;
        counted.requests.inc();
        limits.checkAddress(req, remoteAddr);
        const bearer = bearerToken(req.headers.get("authorization"));
        if (bearer !== null && tokenKind(bearer) === "enrollment") limits.takeEnrollment(bearer, req, remoteAddr);
        const answer = await channel.handle({
          req,
          url,
          remoteAddr,
          requestId,
          get log() {
            return log();
          },
          server,
          secure,
        });
        if (answer === undefined) {
          log().info({ method: req.method, path: url.pathname, status: 101, remoteAddr }, "upgraded");
          return undefined;
        }
        response = answer;
      } else if (url.pathname === API_PREFIX || url.pathname.startsWith(API_PREFIX + "/")) {
        if (req.method === "OPTIONS" && origin !== null) {
          if (!cors.allows(origin)) {
            throw new AppError(403, "cors_origin_denied", `The origin ${origin} may not call this API; see security.cors.allowedOrigins.`);
          }
          timed = series.preflight;
          response = new Response(null, { status: 204, headers: cors.preflightHeaders(origin) });
        } else {
          const path = url.pathname.slice(API_PREFIX.length) || "/";
          if (req.method === "GET" && path === "/openapi.json") {
            timed = series.openapi;
            response = new Response(openapi, { headers: { "Content-Type": "application/json; charset=utf-8" } });
          } else {
            const match = router.match(req.method, path);
            timed = apiSeries.get(match.route) ?? series.unmatched;
            response = await handleApi(req, server, url, remoteAddr, secure, requestId, log(), match);
          }
        }
        api = true;
      } else {
        const page = await ui.handle(req, url);
        if (page !== null) timed = series.ui;
        if (page === null) throw new AppError(404, "not_found", `Nothing is served at ${url.pathname}.`);
        response = page;
      }
    } catch (error) {
      response = errorResponse(error, log());
      api = true;
    }
    if (origin !== null) for (const [name, value] of Object.entries(cors.headers(origin))) response.headers.set(name, value);
    applySecurityHeaders(response, { api, secure });
    response.headers.set("X-Request-Id", requestId);
    timed.observe(req.method, response.status, (performance.now() - arrived) / 1000);
    if (response.status === 401) {
      limits.authFailed(req, remoteAddr);
      const kind = credentialKind(req);
      authFailures.record(remoteAddr, kind, url.pathname);
      metrics.authFailed(kind);
    }
    // Only refusals look at the credential again: enrollment failures (refused, expired, used up, rate-limited).
    if (response.status >= 400 && response.status < 500 && channel !== undefined && credentialKind(req) === "enrollment") metrics.enrollmentFailed();
    if (logger.isLevelEnabled("info")) {
      log().info({ method: req.method, path: url.pathname, status: response.status, ms: Math.round(performance.now() - arrived), remoteAddr }, "request");
    }
    return response;
  }

  const server = Bun.serve({
    hostname: config.listen.host,
    port: config.listen.port,
    development: false,
    // Also the deadline for a request body: one trickled in slower is dropped (headers have a fixed ~10 s deadline).
    idleTimeout: config.http.idleTimeoutSeconds,
    // Per-route limits are enforced while reading; this is only the outer bound.
    maxRequestBodySize: 64 * 1024 * 1024,
    ...(config.tls ? { tls: { cert: Bun.file(config.tls.certFile), key: Bun.file(config.tls.keyFile) } } : {}),
    fetch,
    websocket: {
      // Channels bound their own messages; this is only the outer bound.
      maxPayloadLength: 16 * 1024 * 1024,
      idleTimeout: 0,
      // permessage-deflate when the client offers it (opamp-go with EnableCompression, browsers): one
      // shared compressor and decompressor, no context kept per socket, so a session costs no zlib memory.
      perMessageDeflate: { compress: "shared", decompress: "shared" },
      // Sessions open and messages received, by channel (server/metrics/).
      open: (ws: ChannelSocket) => {
        seriesOf(ws.data.channel).sessions.inc();
        return ws.data.channel.open?.(ws);
      },
      message: (ws: ChannelSocket, message: string | Buffer) => {
        seriesOf(ws.data.channel).messages.inc();
        return ws.data.channel.message?.(ws, message);
      },
      close: (ws: ChannelSocket, code: number, reason: string) => {
        seriesOf(ws.data.channel).sessions.dec();
        return ws.data.channel.close?.(ws, code, reason);
      },
    },
    error(error) {
      return errorResponse(error, logger);
    },
  });
  const url = new URL(`${config.tls ? "https" : "http"}://${formatHost(server.hostname ?? config.listen.host)}:${server.port}`);
  return {
    url,
    server,
    markStarted: () => void (started = true),
    stop: () => server.stop(),
  };
}

function formatHost(host: string): string {
  return host.includes(":") ? `[${host}]` : host;
}
