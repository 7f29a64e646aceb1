/**
 * The one JSON error shape of the API and the channels. Every failure leaves
 * the server as {"error": {"code", "message", "details"}} with the status its
 * typed error carries; an unexpected exception is logged with its stack and
 * answered as a bland 500.
 */
import type { Logger } from "pino";
import { AppError } from "../errors.ts";
import { json } from "../lib/json.ts";

export function errorResponse(error: unknown, log: Logger): Response {
  if (error instanceof AppError) {
    return json({ error: { code: error.code, message: error.message, details: error.details } }, error.status, error.headers);
  }
  log.error({ err: error }, "unhandled error");
  return json({ error: { code: "internal", message: "The server failed to handle this request; see its log by request id.", details: [] } }, 500);
}
