import { expect, test } from "bun:test";
import { ValidationError } from "../errors.ts";
import { validateLogs } from "./otlp.ts";

function problem(input: unknown): { path: string; message: string } {
  try {
    validateLogs(input);
  } catch (error) {
    if (error instanceof ValidationError) {
      expect(error.message).toBe(`The dry-run input is not valid: ${error.details[0]!.path}: ${error.details[0]!.message}.`);
      return error.details[0]!;
    }
    throw error;
  }
  throw new Error("expected the input to be rejected");
}

const records = (...logRecords: unknown[]) => ({ resourceLogs: [{ scopeLogs: [{ logRecords }] }] });

test("a valid input is returned as it is, with its record count", () => {
  const input = {
    resourceLogs: [
      {
        resource: { attributes: [{ key: "service.name", value: { stringValue: "api" } }], droppedAttributesCount: 0 },
        schemaUrl: "https://opentelemetry.io/schemas/1.24.0",
        scopeLogs: [
          {
            scope: { name: "lib", version: "1", attributes: [] },
            logRecords: [
              {
                timeUnixNano: "1700000000000000000",
                observedTimeUnixNano: 1700000000000000000,
                severityNumber: 9,
                severityText: "INFO",
                body: { stringValue: "GET /healthz" },
                attributes: [
                  { key: "i", value: { intValue: "-9223372036854775808" } },
                  { key: "d", value: { doubleValue: "Infinity" } },
                  { key: "b", value: { bytesValue: "3q2+7w==" } },
                  { key: "l", value: { arrayValue: { values: [{ kvlistValue: { values: [{ key: "k" }] } }] } } },
                  { key: "e", value: {} },
                  { key: "n" },
                ],
                traceId: "5b8efff798038103d269b633813fc60c",
                spanId: "eee19b7ec3c1b174",
                flags: 1,
                unknownField: "kept",
              },
              { severityNumber: "SEVERITY_NUMBER_WARN" },
            ],
          },
          {},
        ],
      },
      {},
    ],
  };
  const { logs, records: count } = validateLogs(input);
  expect(logs).toBe(input as never);
  expect(count).toBe(2);
});

test.each([
  [null, "input", "must be an object with resourceLogs (OTLP JSON logs)"],
  [[], "input", "must be an object with resourceLogs (OTLP JSON logs)"],
  [{}, "input.resourceLogs", "must be an array"],
  [{ resourceLogs: [1] }, "input.resourceLogs[0]", "must be an object"],
  [{ resourceLogs: [{ scopeLogs: {} }] }, "input.resourceLogs[0].scopeLogs", "must be an array"],
  [{ resourceLogs: [{ resource: { attributes: [{ key: 1 }] } }] }, "input.resourceLogs[0].resource.attributes[0].key", "must be a string"],
  [{ resourceLogs: [{ scopeLogs: [{}, { logRecords: "x" }] }] }, "input.resourceLogs[0].scopeLogs[1].logRecords", "must be an array"],
  [{ resourceLogs: [{ scopeLogs: [{ scope: { name: 5 } }] }] }, "input.resourceLogs[0].scopeLogs[0].scope.name", "must be a string"],
  [records({}, {}, { body: "text" }), "input.resourceLogs[0].scopeLogs[0].logRecords[2].body", 'must be an AnyValue object such as {"stringValue": "..."}'],
  [records({ body: { stringValue: 5 } }), "input.resourceLogs[0].scopeLogs[0].logRecords[0].body.stringValue", "must be a string"],
  [
    records({ body: { stringValue: "a", intValue: 1 } }),
    "input.resourceLogs[0].scopeLogs[0].logRecords[0].body",
    "sets both stringValue and intValue; an AnyValue holds one",
  ],
  [
    records({ body: { intValue: "1.5" } }),
    "input.resourceLogs[0].scopeLogs[0].logRecords[0].body.intValue",
    "must be a 64-bit integer (a number or a decimal string)",
  ],
  [
    records({ body: { intValue: "9223372036854775808" } }),
    "input.resourceLogs[0].scopeLogs[0].logRecords[0].body.intValue",
    "must be a 64-bit integer (a number or a decimal string)",
  ],
  [records({ body: { doubleValue: "abc" } }), "input.resourceLogs[0].scopeLogs[0].logRecords[0].body.doubleValue", "must be a number"],
  [records({ body: { boolValue: "true" } }), "input.resourceLogs[0].scopeLogs[0].logRecords[0].body.boolValue", "must be true or false"],
  [records({ body: { bytesValue: "not base64!" } }), "input.resourceLogs[0].scopeLogs[0].logRecords[0].body.bytesValue", "must be a base64 string"],
  [
    records({ body: { arrayValue: { values: [{}, { stringValue: 1 }] } } }),
    "input.resourceLogs[0].scopeLogs[0].logRecords[0].body.arrayValue.values[1].stringValue",
    "must be a string",
  ],
  [
    records({ body: { kvlistValue: { values: [{ key: "k", value: 3 }] } } }),
    "input.resourceLogs[0].scopeLogs[0].logRecords[0].body.kvlistValue.values[0].value",
    'must be an AnyValue object such as {"stringValue": "..."}',
  ],
  [records({ attributes: {} }), "input.resourceLogs[0].scopeLogs[0].logRecords[0].attributes", "must be an array of {key, value}"],
  [
    records({ attributes: [{ key: "a", value: { boolValue: 1 } }] }),
    "input.resourceLogs[0].scopeLogs[0].logRecords[0].attributes[0].value.boolValue",
    "must be true or false",
  ],
  [records({ severityText: 3 }), "input.resourceLogs[0].scopeLogs[0].logRecords[0].severityText", "must be a string"],
  [
    records({ severityNumber: 25 }),
    "input.resourceLogs[0].scopeLogs[0].logRecords[0].severityNumber",
    "must be an integer from 0 to 24 or a name such as SEVERITY_NUMBER_INFO",
  ],
  [
    records({ timeUnixNano: "-1" }),
    "input.resourceLogs[0].scopeLogs[0].logRecords[0].timeUnixNano",
    "must be a non-negative integer (a number or a decimal string)",
  ],
  [
    records({ timeUnixNano: "18446744073709551616" }),
    "input.resourceLogs[0].scopeLogs[0].logRecords[0].timeUnixNano",
    "must be a non-negative integer (a number or a decimal string)",
  ],
  [records({ traceId: "xyz" }), "input.resourceLogs[0].scopeLogs[0].logRecords[0].traceId", "must be 32 hex digits"],
  [records({ spanId: "0011" }), "input.resourceLogs[0].scopeLogs[0].logRecords[0].spanId", "must be 16 hex digits"],
  [records({ flags: -1 }), "input.resourceLogs[0].scopeLogs[0].logRecords[0].flags", "must be an integer from 0 to 4294967295"],
])("%j is rejected at %s", (input, path, message) => {
  expect(problem(input)).toEqual({ path, message });
});

test("values nest at most 100 deep, so hostile input cannot exhaust the stack", () => {
  let value: unknown = { stringValue: "leaf" };
  for (let i = 0; i < 10_000; i++) value = { arrayValue: { values: [value] } };
  expect(problem(records({ body: value })).message).toBe("values nest more than 100 deep");
});
