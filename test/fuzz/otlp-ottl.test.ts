/**
 * OTLP JSON and OTTL, at the unit level and over the API. Random and mutated
 * OTLP JSON documents for the dry-run and for /v1/metrics, random and
 * mutated OTTL conditions for the parser and for the filter processor of a
 * dry-run: a typed error (OttlError with a column in range) or a clear 400,
 * never an unhandled exception, never a 500. Inputs are long (tens of
 * thousands of characters) but bounded, so super-linear parsing would show
 * as a test that does not finish. Random backtracking patterns (nested
 * quantifiers against near-matching bodies) never hold the event loop.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import { AppError } from "../../server/errors.ts";
import { dryRunIsolated } from "../../server/ottl/dryrun-isolated.ts";
import { OttlError } from "../../server/ottl/errors.ts";
import { parseCondition } from "../../server/ottl/parser.ts";
import { PROCESSOR_TEMPLATES } from "../../server/ottl/templates.ts";
import { startTestServer, type TestServer } from "../harness.ts";
import { mutated, toJsonText } from "./arbitraries.ts";

const SAMPLE_CONDITIONS = [
  'IsMatch(body, "^GET /health")',
  'attributes["http.target"] == "/ready" and severity_number >= SEVERITY_NUMBER_WARN',
  'resource.attributes["service.name"] != nil or not IsString(body)',
  "severity_number < 9",
];

const condition = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.string({ unit: "grapheme", maxLength: 40 }),
  fc.tuple(fc.constantFrom(...SAMPLE_CONDITIONS), fc.nat(), fc.string({ maxLength: 4 }), fc.nat({ max: 2 })).map(([text, at, insert, kind]) => {
    const i = at % (text.length + 1);
    return kind === 0 ? text.slice(0, i) : kind === 1 ? text.slice(0, i) + insert + text.slice(i) : text.slice(0, i) + text.slice(i + 1);
  }),
  fc.constantFrom(...SAMPLE_CONDITIONS).map((c) => Array.from({ length: 500 }, () => c).join(" and ")),
  fc.constantFrom('"', "(", "not ", "[", "IsMatch(").map((piece) => piece.repeat(20_000)),
);

test("random and mutated conditions parse or raise an OttlError with a column in range", () => {
  fc.assert(
    fc.property(condition, (text) => {
      try {
        parseCondition(text);
      } catch (error) {
        if (!(error instanceof OttlError)) throw new Error(`${JSON.stringify(text.slice(0, 100))} threw ${String(error)}`);
        expect(error.column).toBeGreaterThanOrEqual(1);
        expect(error.column).toBeLessThanOrEqual(text.length + 1);
      }
    }),
    { numRuns: 500 },
  );
});

let server: TestServer;
let pipelineId: string;
let token: string;
beforeAll(async () => {
  server = await startTestServer();
  pipelineId = (await server.call<{ id: string }>("/pipelines", "POST", { name: "fuzz-dry", signal: "logs" })).id;
  const collectorId = (await server.call<{ id: string }>("/collectors", "POST", { name: "fuzz-metrics" })).id;
  token = (await server.call<{ token: string }>(`/collectors/${collectorId}/otlp-token`, "POST")).token;
});
afterAll(() => server?.stop());

const kv = (key: string, value: unknown) => ({ key, value });
const logs = fc.record({
  resourceLogs: fc.array(
    fc.record({
      resource: fc.record({
        attributes: fc.array(fc.constantFrom(kv("service.name", { stringValue: "api" }), kv("n", { intValue: "7" }), kv("d", { doubleValue: 1.5 })), {
          maxLength: 3,
        }),
      }),
      scopeLogs: fc.array(
        fc.record({
          scope: fc.constant({ name: "s" }),
          logRecords: fc.array(
            fc.record({
              body: fc.oneof(
                fc.record({ stringValue: fc.string({ maxLength: 30 }) }),
                fc.constant({ kvlistValue: { values: [kv("a", { boolValue: true })] } }),
              ),
              severityNumber: fc.integer({ min: 0, max: 24 }),
              timeUnixNano: fc.constantFrom("1700000000000000000", 1700000000000000000, "x"),
              attributes: fc.array(
                fc.constantFrom(
                  kv("http.target", { stringValue: "/ready" }),
                  kv("b", { bytesValue: "AAE=" }),
                  kv("arr", { arrayValue: { values: [{ intValue: 1 }] } }),
                ),
                { maxLength: 3 },
              ),
              traceId: fc.constantFrom("", "5b8efff798038103d269b633813fc60c", "zz"),
            }),
            { maxLength: 4 },
          ),
        }),
        { maxLength: 2 },
      ),
    }),
    { maxLength: 2 },
  ),
});

async function clear(res: Response, what: string): Promise<void> {
  const text = await res.text();
  if (res.status >= 500) throw new Error(`${what} → ${res.status} ${text.slice(0, 300)}`);
  if (res.status >= 400) {
    const parsed = JSON.parse(text) as { error?: { message?: string }; message?: string };
    expect((parsed.error?.message ?? parsed.message ?? "").length).toBeGreaterThan(0);
  }
}

test("dry-run: random and mutated OTLP JSON logs through random filter conditions, never a 500", async () => {
  const filter = fc
    .array(condition, { minLength: 1, maxLength: 3 })
    .map((conditions) => ({ type: "filter", config: { error_mode: "ignore", logs: { log_record: conditions } } }));
  const template = PROCESSOR_TEMPLATES.find((t) => t.id === "drop-health-check-logs")!.processor;
  await fc.assert(
    fc.asyncProperty(fc.oneof(logs, mutated(logs)), fc.oneof(filter, fc.constant(template)), async (input, processor) => {
      const body = toJsonText({ input, processors: [processor] });
      const res = await server.api(`/pipelines/${pipelineId}/dry-run`, { method: "POST", body, headers: { "Content-Type": "application/json" } });
      await clear(res, `dry-run ${body.slice(0, 300)}`);
    }),
    { numRuns: 200 },
  );
}, 60_000);

test("/v1/metrics JSON: random and mutated documents are answered, refusals with a message, never a 500", async () => {
  const sample = {
    resourceMetrics: [
      {
        scopeMetrics: [
          {
            metrics: [
              {
                name: "otelcol_receiver_accepted_log_records",
                sum: {
                  aggregationTemporality: 2,
                  isMonotonic: true,
                  dataPoints: [{ attributes: [kv("receiver", { stringValue: "otlp" })], startTimeUnixNano: "1", timeUnixNano: "2000000000", asDouble: 3 }],
                },
              },
            ],
          },
        ],
      },
    ],
  };
  await fc.assert(
    fc.asyncProperty(mutated(fc.constant(sample)), async (doc) => {
      const body = toJsonText(doc);
      const res = await fetch(`${server.base}/v1/metrics`, {
        method: "POST",
        body,
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${token}` },
      });
      await clear(res, `/v1/metrics ${body.slice(0, 300)}`);
    }),
    { numRuns: 200 },
  );
}, 60_000);

/**
 * Run in process, a dry-run would hold the event loop at least until its
 * budget is spent, and no timer would fire meanwhile; here a run stopped at
 * its budget saw the loop's timer tick while it ran. (Over real sockets:
 * test/api/evaluation-bounds.test.ts.) Counted, not timed, so scheduling
 * noise on a busy machine cannot fail it.
 */
test("dry-run: random backtracking patterns on near-matching bodies never hold the event loop; each run answers or is stopped with 422", async () => {
  const budgetMs = 500;
  const atom = fc.constantFrom("a", "a?", "aa", "(?:a|a)", "[ab]", "(?:a|aa)", "\\w");
  const pattern = fc
    .tuple(atom, fc.constantFrom("+", "*", "{1,9}"), fc.constantFrom("+", "*"), fc.constantFrom("$", "b", "!$"))
    .map(([a, inner, outer, tail]) => `^(?:(?:${a})${inner})${outer}${tail}`);
  const run = fc.record({
    patterns: fc.array(pattern, { minLength: 1, maxLength: 5 }),
    body: fc.integer({ min: 12, max: 30 }).map((n) => "a".repeat(n) + "!"),
  });
  await fc.assert(
    fc.asyncProperty(run, async ({ patterns, body }) => {
      let ticks = 0;
      const ticker = setInterval(() => ticks++, 5);
      const conditions = patterns.map((p) => `IsMatch(body, ${JSON.stringify(p)})`);
      const processors = [{ nodeId: "fuzz", type: "filter", config: { logs: { log_record: conditions } } }];
      const input = { resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: { stringValue: body } }, { body: { stringValue: body + body } }] }] }] };
      const outcome = await dryRunIsolated(input, processors, budgetMs).then(
        (result) => `answered ${result.steps.length}`,
        (error: unknown) => (error instanceof AppError ? `${error.status} ${error.code}` : String(error)),
      );
      clearInterval(ticker);
      expect(["answered 1", "422 dry_run_too_slow"]).toContain(outcome);
      // A run that lasted its whole budget let the loop's timer fire meanwhile.
      if (outcome === "422 dry_run_too_slow") expect(ticks).toBeGreaterThan(0);
    }),
    { numRuns: 12 },
  );
}, 60_000);
