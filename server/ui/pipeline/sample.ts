/**
 * The dry-run's built-in sample: web-server logs in OTLP JSON where health
 * checks (in the body, or only in `http.target`) mix with ordinary requests
 * and lookalikes (`/readyz`, `/api/live-stream`) that a health-check
 * filter must keep. Three records are health checks, four are not.
 */
const record = (body: string, attributes: Record<string, string> = {}, severity = "INFO") => ({
  timeUnixNano: "1735689600000000000",
  severityText: severity,
  body: { stringValue: body },
  attributes: Object.entries(attributes).map(([key, value]) => ({ key, value: { stringValue: value } })),
});

const SAMPLE_LOGS = {
  resourceLogs: [
    {
      resource: { attributes: [{ key: "service.name", value: { stringValue: "checkout" } }] },
      scopeLogs: [
        {
          scope: { name: "nginx" },
          logRecords: [
            record("GET /healthz HTTP/1.1 200"),
            record("GET /api/orders/42 HTTP/1.1 200"),
            record("GET /ready HTTP/1.1 200"),
            record("POST /api/payments HTTP/1.1 502", {}, "ERROR"),
            record("request served", { "http.target": "/live" }),
            record("GET /readyz HTTP/1.1 200"),
            record("GET /api/live-stream HTTP/1.1 200"),
          ],
        },
      ],
    },
  ],
};

export const SAMPLE_TEXT = JSON.stringify(SAMPLE_LOGS, null, 2);
