/**
 * GET /metrics: the exposition answer, and the separate unauthenticated
 * listener of `metrics.listen` (README "Operating", "Metrics"). On the main
 * listener the edge checks the Bearer token's `health:read` scope first.
 */
import type { Server } from "bun";
import type { Logger } from "pino";
import type { ServerMetrics } from "./metrics.ts";
import { CONTENT_TYPES, formatFor } from "./registry.ts";

export const METRICS_PATH = "/metrics";

/** The exposition in the format the Accept header asks for (OpenMetrics, else text 0.0.4). */
export async function metricsResponse(metrics: ServerMetrics, req: Request): Promise<Response> {
  const format = formatFor(req.headers.get("accept"));
  const body = await metrics.expose(format);
  return new Response(req.method === "HEAD" ? null : body, { headers: { "Content-Type": CONTENT_TYPES[format], "Cache-Control": "no-store" } });
}

export interface MetricsListener {
  url: URL;
  stop(): Promise<void>;
}

/**
 * The `metrics.listen` address: GET /metrics without credentials, nothing else. Bind it to an address only
 * the Prometheus server reaches (loopback, a management network).
 */
export function startMetricsListener(listen: { host: string; port: number }, metrics: ServerMetrics, logger: Logger): MetricsListener {
  const server: Server<undefined> = Bun.serve({
    hostname: listen.host,
    port: listen.port,
    development: false,
    async fetch(req) {
      const { pathname } = new URL(req.url);
      if (pathname !== METRICS_PATH) return new Response("Only GET /metrics is served here.\n", { status: 404 });
      if (req.method !== "GET" && req.method !== "HEAD") return new Response("Use GET.\n", { status: 405, headers: { Allow: "GET, HEAD" } });
      const started = performance.now();
      const answer = await metricsResponse(metrics, req);
      metrics.route(METRICS_PATH).observe(req.method, answer.status, (performance.now() - started) / 1000);
      return answer;
    },
    error(error) {
      logger.error({ err: error }, "metrics listener");
      return new Response("internal error\n", { status: 500 });
    },
  });
  const host = server.hostname ?? listen.host;
  return {
    url: new URL(`http://${host.includes(":") ? `[${host}]` : host}:${server.port}`),
    stop: () => server.stop(),
  };
}
