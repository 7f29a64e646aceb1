import { expect, test } from "bun:test";
import type { LogView } from "./compile.ts";
import { OttlEvalError } from "./errors.ts";
import { compileLogFilter, filterLogs } from "./filter.ts";
import type { LogRecord, ResourceLogs } from "./otlp.ts";

const view = (log: LogRecord): LogView => ({ log, scope: undefined, resource: undefined });
const text = (s: string): LogRecord => ({ body: { stringValue: s } });
const map: LogRecord = { body: { kvlistValue: { values: [{ key: "level", value: { stringValue: "debug" } }] } } };

test("a record is dropped when any condition is true", () => {
  const drop = compileLogFilter({ logs: { log_record: ['body == "a"', 'body == "b"'] } });
  expect([text("a"), text("b"), text("c")].map((r) => drop(view(r)))).toEqual([true, true, false]);
  expect(compileLogFilter({ metrics: { metric: ['name == "x"'] } })(view(text("a")))).toBe(false);
});

test("error_mode ignore (the default) and silent skip a condition that fails on a record", () => {
  const conditions = ['body["level"] == "debug"', 'body == "plain"'];
  for (const error_mode of [undefined, "ignore", "silent"] as const) {
    const drop = compileLogFilter({ error_mode, logs: { log_record: conditions } });
    expect(drop(view(map))).toBe(true);
    expect(drop(view(text("plain")))).toBe(true);
    expect(drop(view(text("other")))).toBe(false);
  }
});

test("error_mode propagate lets the failure out", () => {
  const drop = compileLogFilter({ error_mode: "propagate", logs: { log_record: ['body["level"] == "debug"'] } });
  expect(drop(view(map))).toBe(true);
  expect(() => drop(view(text("plain")))).toThrow(OttlEvalError);
});

test("filtering keeps the shape, shares what it keeps, and removes what it empties", () => {
  const keep = text("keep");
  const scopeKept = { scope: { name: "s" }, logRecords: [keep] };
  const batch: ResourceLogs[] = [
    { resource: { attributes: [] }, scopeLogs: [scopeKept, { logRecords: [text("drop")] }, {}] },
    { scopeLogs: [{ logRecords: [text("drop"), keep, text("drop")], schemaUrl: "u" }] },
    { scopeLogs: [{ logRecords: [text("drop")] }] },
    {},
  ];
  const { batch: out, records } = filterLogs(batch, (v) => v.log !== keep);
  expect(records).toBe(2);
  expect(out).toEqual([{ resource: { attributes: [] }, scopeLogs: [scopeKept] }, { scopeLogs: [{ logRecords: [keep], schemaUrl: "u" }] }]);
  expect(out[0]!.scopeLogs![0]).toBe(scopeKept);
  expect(batch[1]!.scopeLogs![0]!.logRecords).toHaveLength(3);
  const all = filterLogs([batch[1]!], () => false);
  expect(all.batch[0]).toBe(batch[1]!);
});

test("conditions see the record's scope and resource", () => {
  const drop = compileLogFilter({ logs: { log_record: ['resource.attributes["env"] == "dev" and instrumentation_scope.name == "noisy"'] } });
  const batch: ResourceLogs[] = [
    {
      resource: { attributes: [{ key: "env", value: { stringValue: "dev" } }] },
      scopeLogs: [
        { scope: { name: "noisy" }, logRecords: [text("x")] },
        { scope: { name: "quiet" }, logRecords: [text("y")] },
      ],
    },
    { scopeLogs: [{ scope: { name: "noisy" }, logRecords: [text("z")] }] },
  ];
  expect(filterLogs(batch, drop).records).toBe(2);
});
