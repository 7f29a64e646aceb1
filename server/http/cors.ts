/**
 * CORS as configured: the origins in security.cors.allowedOrigins, or
 * when that list is empty, the origin of externalUrl alone. The bundled UI is
 * same-origin, so this only matters to external API callers.
 */

const ALLOWED_HEADERS = "Authorization, Content-Type, X-Request-Id";
const EXPOSED_HEADERS = "X-Request-Id, Retry-After, WWW-Authenticate, Allow";
const METHODS = "GET, POST, PUT, PATCH, DELETE";

export class Cors {
  private readonly origins: Set<string>;

  constructor(allowedOrigins: string[], externalUrl: string) {
    const list = allowedOrigins.length > 0 ? allowedOrigins : externalUrl === "" ? [] : [new URL(externalUrl).origin];
    this.origins = new Set(list);
  }

  allows(origin: string): boolean {
    return this.origins.has(origin);
  }

  /** Headers to add to an answer for a request with this Origin (none when not allowed). */
  headers(origin: string | null): Record<string, string> {
    if (origin === null || !this.allows(origin)) return {};
    return { "Access-Control-Allow-Origin": origin, "Access-Control-Expose-Headers": EXPOSED_HEADERS, Vary: "Origin" };
  }

  preflightHeaders(origin: string): Record<string, string> {
    return {
      ...this.headers(origin),
      "Access-Control-Allow-Methods": METHODS,
      "Access-Control-Allow-Headers": ALLOWED_HEADERS,
      "Access-Control-Max-Age": "600",
    };
  }
}
