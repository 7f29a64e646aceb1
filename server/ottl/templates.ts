/**
 * Canned processors a pipeline can start from. "Drop Health Check Logs"
 * drops requests for /healthz, /healthy, /ready and /live, with or without a
 * query string or a trailing slash, wherever the request shows: in the body
 * (`GET /healthz?verbose=1 HTTP/1.1`, `"/live"` in JSON, a bare `/ready`) or
 * in the `http.target` and `url.path` attributes. A path only counts as
 * itself: `/readyz`, `/already`, `/api/live-stream` and
 * `/healthcheck-report` are kept. The patterns are RE2, as the collector runs them.
 */
import type { ProcessorTemplate } from "../../shared/config-records.ts";
import { formatString } from "./format.ts";

/** A health path, standing alone: after the start, a space or a quote; before a query, a space, a quote or the end. */
const HEALTH_IN_TEXT = String.raw`(?:^|[\s"'])/(?:healthz|healthy|ready|live)/?(?:[?\s"']|$)`;
/** An attribute holds the path (http.target with its query) and nothing else. */
const HEALTH_PATH = String.raw`^/(?:healthz|healthy|ready|live)/?(?:\?|$)`;

/** The template objects are shared by every caller, so they are frozen. */
function freeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const child of Object.values(value)) freeze(child);
    Object.freeze(value);
  }
  return value;
}

export const PROCESSOR_TEMPLATES: readonly ProcessorTemplate[] = freeze([
  {
    id: "drop-health-check-logs",
    name: "Drop Health Check Logs",
    description: "Drops log records of requests for /healthz, /healthy, /ready and /live (in the body, http.target or url.path).",
    processor: {
      type: "filter",
      config: {
        error_mode: "ignore",
        logs: {
          log_record: [
            `IsMatch(body, ${formatString(HEALTH_IN_TEXT)})`,
            `IsMatch(attributes["http.target"], ${formatString(HEALTH_PATH)})`,
            `IsMatch(attributes["url.path"], ${formatString(HEALTH_PATH)})`,
          ],
        },
      },
    },
  },
]);
