import { describe, expect, test } from "bun:test";
import { refusal } from "../testutil.ts";
import { dryRun, transformNotSimulated, type ChainProcessor } from "./dryrun.ts";
import { OttlError } from "./errors.ts";
import type { LogRecord, LogsData } from "./otlp.ts";
import { PROCESSOR_TEMPLATES } from "./templates.ts";
import { SIMULATED_EDITORS } from "./transform.ts";

const healthCheck: ChainProcessor = { nodeId: "health", ...PROCESSOR_TEMPLATES[0]!.processor };
const line = (s: string): LogRecord => ({ body: { stringValue: s }, severityText: "INFO" });
const bodies = (output: LogsData) =>
  output.resourceLogs.flatMap((rl) => (rl.scopeLogs ?? []).flatMap((sl) => (sl.logRecords ?? []).map((r) => r.body?.stringValue)));

function mixedInput(): LogsData {
  return {
    resourceLogs: [
      {
        resource: { attributes: [{ key: "service.name", value: { stringValue: "web" } }] },
        scopeLogs: [
          {
            scope: { name: "access" },
            logRecords: [
              line("GET /healthz?verbose=1 HTTP/1.1"),
              line("GET /api/orders HTTP/1.1"),
              line('"/live"'),
              line("GET /readyz HTTP/1.1"),
              line("/ready"),
              line("GET /already HTTP/1.1"),
            ],
          },
          { scope: { name: "probes" }, logRecords: [line("/healthy"), line("GET /live HTTP/1.1")] },
        ],
      },
      {
        resource: { attributes: [{ key: "service.name", value: { stringValue: "api" } }] },
        scopeLogs: [
          {
            logRecords: [
              line("GET /api/live-stream HTTP/1.1"),
              { body: { stringValue: "request served" }, attributes: [{ key: "http.target", value: { stringValue: "/ready?full=1" } }] },
              { body: { stringValue: "request served" }, attributes: [{ key: "url.path", value: { stringValue: "/healthcheck-report" } }] },
              line("/healthcheck-report"),
            ],
          },
        ],
      },
    ],
  };
}

test("the health-check template keeps exactly the records that are not health checks", () => {
  const input = mixedInput();
  const before = JSON.stringify(input);
  const { output, steps } = dryRun(input, [healthCheck]);
  expect(bodies(output)).toEqual([
    "GET /api/orders HTTP/1.1",
    "GET /readyz HTTP/1.1",
    "GET /already HTTP/1.1",
    "GET /api/live-stream HTTP/1.1",
    "request served",
    "/healthcheck-report",
  ]);
  expect(output.resourceLogs[1]!.scopeLogs![0]!.logRecords![1]!.attributes![0]!.key).toBe("url.path");
  // The dropped records by their place in the input: the health checks.
  expect(steps).toEqual([{ nodeId: "health", type: "filter", in: 12, out: 6, dropped: [0, 2, 4, 6, 7, 9] }]);
  // The probes scope lost every record, so it is gone, as in the collector.
  expect(output.resourceLogs[0]!.scopeLogs!.map((s) => s.scope!.name)).toEqual(["access"]);
  expect(JSON.stringify(input)).toBe(before);
  expect(output.resourceLogs[0]!.scopeLogs![0]!.logRecords![0]).toBe(input.resourceLogs[0]!.scopeLogs![0]!.logRecords![1]!);
});

test("a chain runs in order and counts records in and out per step", () => {
  const input = mixedInput();
  const { output, steps } = dryRun(input, [
    { nodeId: "tag", type: "resource", config: { attributes: [{ key: "env", action: "insert", value: "prod" }] } },
    healthCheck,
    { nodeId: "debug", type: "filter", config: { logs: { log_record: ['resource.attributes["service.name"] == "api"'] } } },
    { nodeId: "mark", type: "attributes", config: { actions: [{ key: "checked", action: "upsert", value: true }] } },
    { nodeId: "batch", type: "batch", config: { send_batch_size: 512, timeout: "200ms" } },
  ]);
  expect(steps).toEqual([
    { nodeId: "tag", type: "resource", in: 12, out: 12, dropped: [] },
    { nodeId: "health", type: "filter", in: 12, out: 6, dropped: [0, 2, 4, 6, 7, 9] },
    { nodeId: "debug", type: "filter", in: 6, out: 3, dropped: [8, 10, 11] },
    { nodeId: "mark", type: "attributes", in: 3, out: 3, dropped: [] },
    { nodeId: "batch", type: "batch", in: 3, out: 3, dropped: [] },
  ]);
  expect(bodies(output)).toEqual(["GET /api/orders HTTP/1.1", "GET /readyz HTTP/1.1", "GET /already HTTP/1.1"]);
  expect(output.resourceLogs).toHaveLength(1);
  expect(output.resourceLogs[0]!.resource!.attributes!.map((a) => a.key)).toEqual(["service.name", "env"]);
  const record = output.resourceLogs[0]!.scopeLogs![0]!.logRecords![0]!;
  expect(record.attributes).toEqual([{ key: "checked", value: { boolValue: true } }]);
  expect(input.resourceLogs[0]!.scopeLogs![0]!.logRecords![1]!.attributes).toBeUndefined();
});

test("no processors, or a filter with no log conditions: the output is the input", () => {
  const input = mixedInput();
  input.resourceLogs[0]!.scopeLogs!.push({ scope: { name: "empty" }, logRecords: [] });
  expect(dryRun(input, [])).toEqual({ output: input, steps: [] });
  const spans: ChainProcessor = { nodeId: "spans", type: "filter", config: { traces: { span: ['name == "ping"'] } } };
  expect(dryRun(input, [spans]).output.resourceLogs).toBe(input.resourceLogs);
  expect(dryRun({ resourceLogs: [] }, [healthCheck])).toEqual({
    output: { resourceLogs: [] },
    steps: [{ nodeId: "health", type: "filter", in: 0, out: 0, dropped: [] }],
  });
});

test("under error_mode propagate, a record the filter cannot evaluate fails the batch at that step", () => {
  const strict: ChainProcessor = { nodeId: "strict", type: "filter", config: { error_mode: "propagate", logs: { log_record: ['body["level"] == "debug"'] } } };
  const { output, steps } = dryRun(mixedInput(), [healthCheck, strict, { nodeId: "b", type: "batch", config: {} }]);
  expect(output).toEqual({ resourceLogs: [] });
  expect(steps[1]).toEqual({
    nodeId: "strict",
    type: "filter",
    in: 6,
    out: 0,
    dropped: [1, 3, 5, 8, 10, 11],
    error: "a condition failed on a record, so the batch is dropped (error_mode propagate): a string value cannot be indexed",
  });
  expect(steps[2]).toEqual({ nodeId: "b", type: "batch", in: 0, out: 0, dropped: [] });
  const lenient = { ...strict, config: { logs: { log_record: ['body["level"] == "debug"'] } } };
  expect(dryRun(mixedInput(), [lenient]).steps[0]).toEqual({ nodeId: "strict", type: "filter", in: 12, out: 12, dropped: [] });
});

test("bad chains and bad inputs are ValidationErrors that name the path", () => {
  const unknown = refusal(() => dryRun(mixedInput(), [healthCheck, { nodeId: "x", type: "routing", config: {} }]));
  expect(unknown.details[0]).toEqual({
    path: "processors[1].type",
    message: "unknown processor type 'routing'; the dry-run runs filter, batch, attributes, resource, transform",
  });
  expect(unknown.message).toContain("'routing'");

  const statement = refusal(() =>
    dryRun(mixedInput(), [
      { nodeId: "t", type: "transform", config: { log_statements: [{ context: "log", statements: ['set(attributes["a"], "b") where'] }] } },
    ]),
  );
  expect(statement.details[0]).toEqual({
    path: "processors[0].config.log_statements[0].statements[0]",
    message: "column 32: 'where' needs a condition after it",
  });

  const condition = refusal(() => dryRun(mixedInput(), [{ nodeId: "f", type: "filter", config: { logs: { log_record: ["true", "IsMatch(body)"] } } }]));
  expect(condition).toBeInstanceOf(OttlError);
  expect(condition.details[0]).toEqual({
    path: "processors[0].config.logs.log_record[1]",
    message: "column 1: IsMatch takes 2 arguments (target, pattern), got 1",
  });

  const config = refusal(() => dryRun(mixedInput(), [{ nodeId: "a", type: "attributes", config: null as never }]));
  expect(config.details[0]!.path).toBe("processors[0].config");

  const input = mixedInput();
  (input.resourceLogs[1]!.scopeLogs![0]!.logRecords![2] as Record<string, unknown>).body = { stringValue: 1 };
  expect(refusal(() => dryRun(input, [healthCheck])).details[0]!.path).toBe("input.resourceLogs[1].scopeLogs[0].logRecords[2].body.stringValue");
  expect(refusal(() => dryRun("logs", [])).details[0]!.path).toBe("input");
});

test("a dry-run stops at its time budget with 422 dry_run_too_slow instead of backtracking for minutes", () => {
  const catastrophic: ChainProcessor = {
    nodeId: "greedy",
    type: "filter",
    config: { logs: { log_record: ['IsMatch(body, "(a+)+$")'] } },
  };
  const input: LogsData = { resourceLogs: [{ scopeLogs: [{ logRecords: Array.from({ length: 50 }, () => line("a".repeat(40) + "!")) }] }] };
  let caught: unknown;
  try {
    dryRun(input, [catastrophic], 50);
  } catch (error) {
    caught = error;
  }
  expect(caught).toMatchObject({ status: 422, code: "dry_run_too_slow" });
  expect((caught as Error).message).toContain("'greedy'");
  // The same chain on ordinary input finishes within the default budget.
  expect(dryRun({ resourceLogs: [{ scopeLogs: [{ logRecords: [line("bbb")] }] }] }, [catastrophic]).steps).toEqual([
    { nodeId: "greedy", type: "filter", in: 1, out: 1, dropped: [] },
  ]);
});

describe("transform", () => {
  const text = (value: string) => ({ stringValue: value });
  const input = (): LogsData => ({
    resourceLogs: [
      {
        resource: { attributes: [{ key: "host.name", value: text("web-1") }] },
        scopeLogs: [
          {
            scope: { name: "app" },
            logRecords: [
              {
                body: text("GET /healthz"),
                severityNumber: 9,
                attributes: [
                  { key: "user", value: text("ann") },
                  { key: "path", value: text("/healthz") },
                ],
              },
              { body: text("disk full"), severityNumber: 17, attributes: [{ key: "user", value: text("bob") }] },
            ],
          },
        ],
      },
    ],
  });
  const transform = (statements: string[], config: Record<string, unknown> = {}): ChainProcessor => ({
    nodeId: "reshape",
    type: "transform",
    config: { ...config, log_statements: [{ context: "log", statements }] },
  });

  test("set, delete_key and keep_keys run in order under their where conditions, and a filter after them sees the result", () => {
    const original = input();
    const before = JSON.stringify(original);
    const drop: ChainProcessor = { nodeId: "drop", type: "filter", config: { logs: { log_record: ['attributes["level"] == "error"'] } } };
    const { output, steps } = dryRun(original, [
      transform([
        'set(attributes["level"], "error") where severity_number >= SEVERITY_NUMBER_ERROR',
        'set(resource.attributes["env"], "prod")',
        'set(severity_text, "WARN") where attributes["path"] == "/healthz"',
        'delete_key(attributes, "user")',
        'keep_keys(resource.attributes, ["env"])',
      ]),
      drop,
    ]);
    expect(steps).toEqual([
      { nodeId: "reshape", type: "transform", in: 2, out: 2, dropped: [] },
      { nodeId: "drop", type: "filter", in: 2, out: 1, dropped: [1] },
    ]);
    // As JSON, which leaves out the dry-run's own record tags.
    expect(JSON.parse(JSON.stringify(output.resourceLogs))).toEqual([
      {
        resource: { attributes: [{ key: "env", value: text("prod") }] },
        scopeLogs: [
          {
            scope: { name: "app" },
            logRecords: [{ body: text("GET /healthz"), severityNumber: 9, severityText: "WARN", attributes: [{ key: "path", value: text("/healthz") }] }],
          },
        ],
      },
    ]);
    expect(JSON.stringify(original)).toBe(before); // the input is never modified
  });

  test("a nil value leaves the target alone; delete_matching_keys and keep_matching_keys take RE2 patterns", () => {
    const { output } = dryRun(input(), [transform(['set(attributes["user"], attributes["missing"])', 'delete_matching_keys(attributes, "^pa")'])]);
    const records = output.resourceLogs[0]!.scopeLogs![0]!.logRecords!;
    expect(records.map((r) => r.attributes)).toEqual([[{ key: "user", value: text("ann") }], [{ key: "user", value: text("bob") }]]);
    const kept = dryRun(input(), [transform(['keep_matching_keys(attributes, "^p")'])]).output.resourceLogs[0]!.scopeLogs![0]!.logRecords!;
    expect(kept.map((r) => r.attributes)).toEqual([[{ key: "path", value: text("/healthz") }], []]);
  });

  test("a record a statement cannot be evaluated on skips it, or fails the batch under error_mode propagate", () => {
    const statements = ['set(attributes["x"], "y") where body["k"] == "v"'];
    expect(dryRun(input(), [transform(statements)]).steps[0]).toEqual({ nodeId: "reshape", type: "transform", in: 2, out: 2, dropped: [] });
    expect(dryRun(input(), [transform(statements, { error_mode: "propagate" })]).steps[0]).toEqual({
      nodeId: "reshape",
      type: "transform",
      in: 2,
      out: 0,
      dropped: [0, 1],
      error: "a statement failed on a record, so the batch is dropped (error_mode propagate): a string value cannot be indexed",
    });
  });

  test("a statement the dry-run does not run makes the step not simulated, saying which and why; records pass unchanged", () => {
    const original = input();
    const { output, steps } = dryRun(original, [transform(['set(attributes["a"], "b")', 'replace_pattern(body, "GET", "PUT")'])]);
    expect(steps[0]).toEqual({
      nodeId: "reshape",
      type: "transform",
      in: 2,
      out: 2,
      dropped: [],
      notSimulated: transformNotSimulated(`log_statements[0].statements[1] calls replace_pattern; the dry-run runs ${SIMULATED_EDITORS.join(", ")}`),
    });
    expect(steps[0]!.notSimulated).toStartWith("the transform step was not simulated: ");
    expect(output.resourceLogs).toBe(original.resourceLogs);
    const resource: ChainProcessor = {
      nodeId: "r",
      type: "transform",
      config: { log_statements: [{ context: "resource", statements: ['set(attributes["a"], "b")'] }] },
    };
    expect(dryRun(input(), [transform(['set(attributes["copy"], resource.attributes)'])]).steps[0]!.notSimulated).toBe(
      transformNotSimulated("log_statements[0].statements[0] reads a whole map; the dry-run reads map entries only"),
    );
    expect(dryRun(input(), [transform(['set(body["k"], "v")'])]).steps[0]!.notSimulated).toStartWith(
      "the transform step was not simulated: log_statements[0].statements[0] sets body[…]",
    );
    expect(dryRun(input(), [resource]).steps[0]!.notSimulated).toBe(
      transformNotSimulated("log_statements[0] runs in the resource context; the dry-run runs statements in the log context only"),
    );
  });
});
