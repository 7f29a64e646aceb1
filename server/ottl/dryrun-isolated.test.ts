import { describe, expect, test } from "bun:test";
import { AppError } from "../errors.ts";
import { dryRunIsolated, MAX_QUEUED_DRY_RUNS, MAX_RUNNING_DRY_RUNS } from "./dryrun-isolated.ts";
import { dryRun, type ChainProcessor } from "./dryrun.ts";
import { PROCESSOR_TEMPLATES } from "./templates.ts";

const record = (body: string, attributes: Record<string, string> = {}) => ({
  body: { stringValue: body },
  attributes: Object.entries(attributes).map(([key, value]) => ({ key, value: { stringValue: value } })),
});
const input = (...records: unknown[]) => ({ resourceLogs: [{ resource: { attributes: [] }, scopeLogs: [{ scope: { name: "s" }, logRecords: records }] }] });

const health: ChainProcessor = { nodeId: "health", ...PROCESSOR_TEMPLATES.find((t) => t.id === "drop-health-check-logs")!.processor };
/** Seconds of backtracking per record in JavaScript. */
const slow: ChainProcessor = {
  nodeId: "slow",
  type: "filter",
  config: { logs: { log_record: Array.from({ length: 30 }, () => 'IsMatch(body, "(a+)+$")') } },
};
const evil = input(record("a".repeat(28) + "!"));

async function refusal(run: Promise<unknown>): Promise<AppError> {
  const error = await run.then(
    () => new Error("expected a refusal"),
    (e: unknown) => e,
  );
  if (!(error instanceof AppError)) throw error;
  return error;
}

describe("dryRunIsolated", () => {
  test("answers what dryRun answers in process, the output as JSON text", async () => {
    const sample = input(record('10.0.0.1 - - "GET /healthz HTTP/1.1" 200'), record("order 42"), record("done", { "url.path": "/live" }));
    const chain: ChainProcessor[] = [{ nodeId: "env", type: "resource", config: { attributes: [{ key: "env", action: "insert", value: "prod" }] } }, health];
    const isolated = await dryRunIsolated(sample, chain);
    const local = dryRun(sample, chain);
    expect(JSON.parse(isolated.output)).toEqual(JSON.parse(JSON.stringify(local.output)));
    expect(isolated.steps).toEqual(local.steps);
  });

  test("a bad chain or input is the same typed 400, naming the key", async () => {
    let error = await refusal(dryRunIsolated(input(), [{ nodeId: "f", type: "filter", config: { logs: { log_record: ["severity_number <"] } } }]));
    expect({ status: error.status, code: error.code, paths: error.details.map((d) => d.path) }).toEqual({
      status: 400,
      code: "validation_failed",
      paths: ["processors[0].config.logs.log_record[0]"],
    });
    error = await refusal(dryRunIsolated({ resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: { stringValue: 5 } }] }] }] }, [health]));
    expect(error.status).toBe(400);
    expect(error.details.map((d) => d.path).join()).toContain("resourceLogs[0].scopeLogs[0].logRecords[0].body");
  });

  test("a run past its budget inside one record's conditions is stopped, naming the processor it was in", async () => {
    const error = await refusal(dryRunIsolated(evil, [health, slow], 300));
    expect({ status: error.status, code: error.code }).toEqual({ status: 422, code: "dry_run_too_slow" });
    expect(error.message).toContain("processor 'slow'");
  });

  test(`past ${MAX_RUNNING_DRY_RUNS} running and ${MAX_QUEUED_DRY_RUNS} waiting, a dry-run is refused 503 dry_run_busy`, async () => {
    const runs = Array.from({ length: MAX_RUNNING_DRY_RUNS + MAX_QUEUED_DRY_RUNS + 2 }, () => refusal(dryRunIsolated(evil, [slow], 150)));
    const codes = (await Promise.all(runs)).map((e) => `${e.status} ${e.code}`);
    expect(codes.filter((c) => c === "503 dry_run_busy")).toHaveLength(2);
    expect(codes.filter((c) => c === "422 dry_run_too_slow")).toHaveLength(MAX_RUNNING_DRY_RUNS + MAX_QUEUED_DRY_RUNS);
    // The slots are given back: the next run is served.
    expect((await dryRunIsolated(input(record("ok")), [health])).steps).toEqual([{ nodeId: "health", type: "filter", in: 1, out: 1, dropped: [] }]);
  }, 30_000);
});
