/**
 * The one JSON error shape of the API, and JSON answers. Every failure leaves
 * the server as {"error": {"code", "message", "details"}}; an unexpected
 * exception is logged with its stack and answered as a bland 500.
 */
import type { Logger } from "pino";
import { AppError } from "../errors.ts";

export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "Content-Type": "application/json; charset=utf-8", ...headers },
  });
}

export function errorResponse(error: unknown, log: Logger): Response {
  if (error instanceof AppError) {
    return json(
      { error: { code: error.code, message: error.message, details: error.details } },
      error.status,
      error.headers,
    );
  }
  log.error({ err: error }, "unhandled error");
  return json(
    { error: { code: "internal", message: "The server failed to handle this request; see its log by request id.", details: [] } },
    500,
  );
}
