import { expect, test } from "bun:test";
import { compileCondition } from "./compile.ts";
import { compileLogFilter } from "./filter.ts";
import type { LogRecord } from "./otlp.ts";
import { validateProcessor } from "./processors.ts";
import { translateRe2 } from "./regex.ts";
import { PROCESSOR_TEMPLATES } from "./templates.ts";

const template = PROCESSOR_TEMPLATES.find((t) => t.id === "drop-health-check-logs")!;
const valid = validateProcessor(template.processor);
const drop = compileLogFilter(valid.type === "filter" ? valid.config : {});
const dropped = (log: LogRecord) => drop({ log, scope: undefined, resource: undefined });
const body = (s: string): LogRecord => ({ body: { stringValue: s } });
const attr = (key: string, s: string): LogRecord => ({ body: { stringValue: "request served" }, attributes: [{ key, value: { stringValue: s } }] });

test("the template is a valid filter processor with the catalog's shape", () => {
  expect(template.name).toBe("Drop Health Check Logs");
  expect(template.processor.type).toBe("filter");
  expect(valid.type).toBe("filter");
  expect(Object.isFrozen(template.processor.config)).toBe(true);
});

test.each([
  "GET /healthz HTTP/1.1",
  "GET /healthz?verbose=1 HTTP/1.1",
  '10.0.0.1 - - [01/Jan/2025:00:00:00 +0000] "GET /ready HTTP/1.1" 200 2',
  '"/live"',
  "/ready",
  "/healthy",
  "/live/",
  "HEAD /healthy?x=1",
  '{"path":"/healthz","status":200}',
  "probe\t/live\tok",
])("drops %j", (text) => {
  expect(dropped(body(text))).toBe(true);
});

test.each([
  "GET /readyz HTTP/1.1",
  "/already",
  "GET /api/live-stream HTTP/1.1",
  "/healthcheck-report",
  "GET /api/v1/healthz-dashboard",
  "GET /live.json",
  "health check passed",
  "POST /orders HTTP/1.1",
  "path=/ready",
  "",
])("keeps %j", (text) => {
  expect(dropped(body(text))).toBe(false);
});

test("drops by http.target and url.path, and only for those exact paths", () => {
  expect(dropped(attr("http.target", "/healthz?verbose=1"))).toBe(true);
  expect(dropped(attr("http.target", "/live"))).toBe(true);
  expect(dropped(attr("url.path", "/ready"))).toBe(true);
  expect(dropped(attr("url.path", "/healthy/"))).toBe(true);
  expect(dropped(attr("http.target", "/readyz"))).toBe(false);
  expect(dropped(attr("url.path", "/api/live"))).toBe(false);
  expect(dropped(attr("url.path", "/live-stream"))).toBe(false);
  expect(dropped(attr("http.route", "/healthz"))).toBe(false);
  expect(dropped({ body: { kvlistValue: { values: [{ key: "url", value: { stringValue: "/healthz" } }] } } })).toBe(true);
});

test("its patterns are plain RE2: no lookaround, nothing JS-specific", () => {
  for (const condition of (template.processor.config.logs as { log_record: string[] }).log_record) {
    expect(() => compileCondition(condition)).not.toThrow();
    const pattern = /"((?:[^"\\]|\\.)*)"\)$/.exec(condition)![1]!;
    const regex = JSON.parse(`"${pattern}"`) as string;
    expect(regex).not.toMatch(/\(\?[=!<]/);
    expect(translateRe2(regex).flags).toBe("u");
  }
});
