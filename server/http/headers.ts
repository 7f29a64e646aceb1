/**
 * Security headers the HTTP edge puts on every answer, whatever produced it
 * (API, error, UI, collector channel, probe). The UI adds its own, stricter
 * set (CSP for the bundle, server/ui/headers.ts) on top.
 */

/** Every answer: no MIME sniffing, no URL (which may carry ids) leaked in Referer. */
const COMMON: Record<string, string> = {
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
};

/**
 * API answers are JSON (or server-sent events) for programs: never cached,
 * since some carry a secret shown once (tokens, invite links, the CSRF token),
 * and never framed or run as a document should a browser open one directly.
 */
export const API_HEADERS: Record<string, string> = {
  "Cache-Control": "no-store",
  "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
  "X-Frame-Options": "DENY",
};

/**
 * Told only over TLS (served directly, or via a trusted proxy that says so):
 * browsers ignore it over plain HTTP, and a plain-HTTP install must not be
 * pinned to an HTTPS it does not have.
 */
export const STRICT_TRANSPORT_SECURITY = "max-age=31536000";

/**
 * Adds the headers every answer carries, and with `api` the API's set. A
 * common header the handler chose already (the UI's Referrer-Policy) is kept.
 */
// Listed once: the edge adds these to every answer, collector polls by the ten thousand per second.
const COMMON_ENTRIES = Object.entries(COMMON);
const API_ENTRIES = Object.entries(API_HEADERS);

export function applySecurityHeaders(response: Response, { api, secure }: { api: boolean; secure: boolean }): Response {
  const headers = response.headers;
  for (const [name, value] of COMMON_ENTRIES) if (!headers.has(name)) headers.set(name, value);
  if (api) for (const [name, value] of API_ENTRIES) headers.set(name, value);
  if (secure) response.headers.set("Strict-Transport-Security", STRICT_TRANSPORT_SECURITY);
  return response;
}
