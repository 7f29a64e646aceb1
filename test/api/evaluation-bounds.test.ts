/**
 * Work a caller hands the server to evaluate (a dry-run's conditions and
 * patterns, a topology's filters to validate) never holds the event loop:
 * while each slow request runs, another client on the same loop polls
 * /healthz over a real socket, and a poll is answered while the dry-run
 * runs (one run on the loop would let none through until it ended); the
 * largest topology is checked, not run, so it is answered within a deadline
 * that running its patterns would exceed by minutes. Nothing is timed: a busy
 * machine makes it slower, not failed. Oversized filters and chains are
 * refused up front, naming the key, with nothing stored.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import {
  MAX_CHAIN_CONDITION_TEXT,
  MAX_CHAIN_CONDITIONS,
  MAX_CHAIN_PROCESSORS,
  MAX_CONDITION_LENGTH,
  MAX_FILTER_CONDITIONS,
} from "../../server/ottl/processors.ts";
import { startTestServer, tokenWithScopes, type TestServer } from "../harness.ts";
import { within } from "../opamp/helpers.ts";
import type { ErrorBody } from "../../server/http/schemas.ts";

let server: TestServer;
let viewer: string;
let editor: string;
let destinationId: string;
beforeAll(async () => {
  server = await startTestServer();
  viewer = await tokenWithScopes(server, ["config:read"]);
  editor = await tokenWithScopes(server, ["config:read", "config:write"]);
  destinationId = (await server.call<{ id: string }>("/destinations", "POST", { name: "gw", type: "otlphttp", config: { endpoint: "https://gw.example.com" } }))
    .id;
  // A fresh process compiles the validators and renderers on first use, whatever the graph's
  // size; one small save and preview first, so the deadlines below are spent on the graphs themselves.
  const warm = (await server.call<{ id: string }>("/pipelines", "POST", { name: "warm", signal: "logs" })).id;
  const small = linear([filter(['IsMatch(body, "^GET /healthz")'])]);
  await server.call(`/pipelines/${warm}/topology`, "PUT", small);
  for (const runtime of ["otelcol", "alloy"]) await server.call(`/pipelines/${warm}/topology/preview?runtime=${runtime}`, "POST", small);
});
afterAll(() => server.stop());

/** ~3 s of backtracking per test on one 28-character body in JavaScript; linear in RE2. */
const CATASTROPHIC = 'IsMatch(body, "(a+)+$")';
const EVIL_BODY = "a".repeat(28) + "!";
/**
 * Deadline for saving or previewing the largest topology. A backtracking engine takes
 * 2^28 steps on EVIL_BODY, seconds per pattern; running its hundreds of patterns
 * would take minutes, while checking them is quick even on a busy machine.
 */
const CHECKED_DEADLINE_MS = 20_000;

/** `count` different backtracking patterns, so nothing can be answered from a cache. */
const pathological = (count: number, salt = 0) => Array.from({ length: count }, (_, i) => `IsMatch(body, "((a+)+|(a|a)+|(a*)*b${salt}x${i})+$")`);

/** The costliest text to check per character: regex groups nested 900 deep, two per condition (~3,600 characters). */
const nested = (salt: number) => {
  const group = (inner: string) => "(".repeat(900) + inner + ")".repeat(900);
  return `IsMatch(body, "${group(`a${salt}`)}|${group(`b${salt}`)}")`;
};

const filter = (conditions: string[]) => ({ type: "filter", config: { logs: { log_record: conditions } } });
const oneRecord = (body: string) => ({ resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: { stringValue: body } }] }] }] });

function linear(processors: { type: string; config: unknown }[]) {
  const nodes = [
    { id: "in", kind: "source" },
    ...processors.map((processor, i) => ({ id: `p${i}`, kind: "processor", processor })),
    { id: "out", kind: "destination", ref: destinationId },
  ];
  return { nodes, edges: nodes.slice(1).map((node, i) => ({ id: `e${i}`, source: nodes[i]!.id, target: node.id })) };
}

/**
 * Runs `request` while polling /healthz every ~20 ms (each answered 200); the
 * request's answer and how many polls were answered before it. The poller
 * shares the server's event loop, so while the loop is held none is answered.
 */
async function whilePolling(request: () => Promise<Response>, what: string): Promise<{ res: Response; body: unknown; pollsDuring: number }> {
  let done = false;
  let pollsDuring = 0;
  const poller = (async () => {
    while (!done) {
      const res = await within(fetch(`${server.base}/healthz`), CHECKED_DEADLINE_MS, `/healthz during ${what}`);
      await res.text();
      expect(res.status).toBe(200);
      if (!done) pollsDuring++;
      await Bun.sleep(20);
    }
  })();
  const res = await within(request(), CHECKED_DEADLINE_MS, what);
  const body = await res.json();
  done = true;
  await poller;
  return { res, body, pollsDuring };
}

describe("a slow dry-run", () => {
  test('30 × IsMatch(body, "(a+)+$") on one record: /healthz is never held, the run is stopped with 422 naming the processor', async () => {
    const pipeline = await server.call<{ id: string; topology: unknown }>("/pipelines", "POST", { name: "slow-dry", signal: "logs" });
    const { res, body, pollsDuring } = await whilePolling(
      () =>
        server.api(`/pipelines/${pipeline.id}/dry-run`, {
          method: "POST",
          token: viewer,
          json: { input: oneRecord(EVIL_BODY), processors: [{ id: "slow", ...filter(Array.from({ length: 30 }, () => CATASTROPHIC)) }] },
        }),
      "the slow dry-run",
    );
    expect(res.status).toBe(422);
    expect((body as ErrorBody).error.code).toBe("dry_run_too_slow");
    expect((body as ErrorBody).error.message).toContain("processor 'slow'");
    // The run lasted its 5 s budget; on the loop it would have let no poll through until it ended.
    expect(pollsDuring).toBeGreaterThan(0);
    expect(await server.call<{ topology: unknown }>(`/pipelines/${pipeline.id}`)).toMatchObject({ topology: pipeline.topology });
  }, 30_000);

  test("the same chain on a harmless record still answers, and the server is still free afterwards", async () => {
    const pipeline = await server.call<{ id: string }>("/pipelines", "POST", { name: "fast-dry", signal: "logs" });
    const res = await server.api(`/pipelines/${pipeline.id}/dry-run`, {
      method: "POST",
      token: viewer,
      json: { input: oneRecord("order 42 shipped"), processors: [{ id: "slow", ...filter(Array.from({ length: 30 }, () => CATASTROPHIC)) }] },
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { steps: unknown[] }).steps).toEqual([{ nodeId: "slow", type: "filter", in: 1, out: 1, dropped: [] }]);
  });

  test(`more than ${MAX_FILTER_CONDITIONS} conditions in a filter, ${MAX_CHAIN_PROCESSORS} processors or ${MAX_CHAIN_CONDITIONS} conditions in a chain, is a 400 naming the key`, async () => {
    const pipeline = await server.call<{ id: string }>("/pipelines", "POST", { name: "big-dry", signal: "logs" });
    const tooMany = filter(Array.from({ length: MAX_FILTER_CONDITIONS + 1 }, () => CATASTROPHIC));
    let res = await server.api(`/pipelines/${pipeline.id}/dry-run`, {
      method: "POST",
      token: viewer,
      json: { input: oneRecord(EVIL_BODY), processors: [tooMany] },
    });
    let error = ((await res.json()) as ErrorBody).error;
    expect({ status: res.status, code: error.code, paths: error.details.map((d) => d.path) }).toEqual({
      status: 400,
      code: "validation_failed",
      paths: ["processors[0].config.logs.log_record"],
    });
    const chain = Array.from({ length: MAX_CHAIN_PROCESSORS + 1 }, () => filter([CATASTROPHIC]));
    res = await server.api(`/pipelines/${pipeline.id}/dry-run`, { method: "POST", token: viewer, json: { input: oneRecord(EVIL_BODY), processors: chain } });
    error = ((await res.json()) as ErrorBody).error;
    expect({ status: res.status, code: error.code }).toEqual({ status: 400, code: "validation_failed" });
    expect(error.details.map((d) => d.path)).toContain("processors");

    const heavy = Array.from({ length: MAX_CHAIN_CONDITIONS / MAX_FILTER_CONDITIONS + 1 }, (_, f) => filter(pathological(MAX_FILTER_CONDITIONS, f)));
    res = await server.api(`/pipelines/${pipeline.id}/dry-run`, { method: "POST", token: viewer, json: { input: oneRecord(EVIL_BODY), processors: heavy } });
    error = ((await res.json()) as ErrorBody).error;
    expect({ status: res.status, code: error.code, paths: error.details.map((d) => d.path) }).toEqual({
      status: 400,
      code: "validation_failed",
      paths: ["processors"],
    });
  });
});

describe("validating a topology", () => {
  const filters = Math.ceil(MAX_CHAIN_CONDITIONS / MAX_FILTER_CONDITIONS);
  const mostConditions = () =>
    linear([
      ...Array.from({ length: filters }, (_, f) => filter(pathological(MAX_FILTER_CONDITIONS, f))),
      ...Array.from({ length: MAX_CHAIN_PROCESSORS - filters }, () => ({ type: "batch", config: {} })),
    ]);
  const mostText = () => {
    const conditions = Array.from({ length: Math.floor(MAX_CHAIN_CONDITION_TEXT / nested(0).length) }, (_, i) => nested(i));
    return linear([filter(conditions), ...Array.from({ length: MAX_CHAIN_PROCESSORS - 1 }, () => ({ type: "batch", config: {} }))]);
  };

  for (const [shape, topology] of [
    [`${MAX_CHAIN_CONDITIONS} pathological patterns`, mostConditions],
    [`${MAX_CHAIN_CONDITION_TEXT} characters of deeply nested groups`, mostText],
  ] as const) {
    test(
      `the most a pipeline may hold (${shape}) is checked, not run, on save and preview: /healthz is never held`,
      async () => {
        const pipeline = await server.call<{ id: string }>("/pipelines", "POST", { name: `big-graph-${shape.length}`, signal: "logs" });
        const saved = await whilePolling(
          () => server.api(`/pipelines/${pipeline.id}/topology`, { method: "PUT", token: editor, json: topology() }),
          `saving ${shape}`,
        );
        expect(saved.res.status).toBe(200);
        for (const runtime of ["otelcol", "alloy"]) {
          const previewed = await whilePolling(
            () => server.api(`/pipelines/${pipeline.id}/topology/preview?runtime=${runtime}`, { method: "POST", token: viewer, json: topology() }),
            `the ${runtime} preview of ${shape}`,
          );
          expect(previewed.res.status).toBe(200);
        }
      },
      4 * CHECKED_DEADLINE_MS,
    );
  }

  test("one processor, condition or character too many is a 400 naming the key, and the stored graph is unchanged", async () => {
    const pipeline = await server.call<{ id: string }>("/pipelines", "POST", { name: "capped-graph", signal: "logs", topology: linear([filter(["true"])]) });
    const before = await server.call(`/pipelines/${pipeline.id}/topology`);

    let res = await server.api(`/pipelines/${pipeline.id}/topology`, {
      method: "PUT",
      token: editor,
      json: linear(Array.from({ length: MAX_CHAIN_PROCESSORS + 1 }, () => filter(["true"]))),
    });
    let error = ((await res.json()) as ErrorBody).error;
    expect({ status: res.status, code: error.code, paths: error.details.map((d) => d.path) }).toEqual({
      status: 400,
      code: "validation_failed",
      paths: ["topology.nodes"],
    });

    res = await server.api(`/pipelines/${pipeline.id}/topology`, {
      method: "PUT",
      token: editor,
      json: linear([filter(Array.from({ length: MAX_FILTER_CONDITIONS + 1 }, () => "true"))]),
    });
    error = ((await res.json()) as ErrorBody).error;
    expect({ status: res.status, code: error.code }).toEqual({ status: 400, code: "validation_failed" });
    expect(error.details.map((d) => d.path).join()).toContain("topology.nodes[1].processor.config.logs.log_record");

    res = await server.api(`/pipelines/${pipeline.id}/topology`, {
      method: "PUT",
      token: editor,
      json: linear(Array.from({ length: MAX_CHAIN_CONDITIONS / MAX_FILTER_CONDITIONS + 1 }, (_, f) => filter(pathological(MAX_FILTER_CONDITIONS, f)))),
    });
    error = ((await res.json()) as ErrorBody).error;
    expect({ status: res.status, code: error.code, paths: error.details.map((d) => d.path) }).toEqual({
      status: 400,
      code: "validation_failed",
      paths: ["topology.nodes"],
    });

    res = await server.api(`/pipelines/${pipeline.id}/topology`, {
      method: "PUT",
      token: editor,
      json: linear([filter(["true", `${"true and ".repeat(500)}true`])]),
    });
    error = ((await res.json()) as ErrorBody).error;
    expect({ status: res.status, code: error.code }).toEqual({ status: 400, code: "validation_failed" });
    expect(error.details.map((d) => d.path).join()).toContain("topology.nodes[1].processor.config.logs.log_record[1]");
    expect(`${"true and ".repeat(500)}true`.length).toBeGreaterThan(MAX_CONDITION_LENGTH);

    const longest = Array.from({ length: Math.floor(MAX_CHAIN_CONDITION_TEXT / nested(0).length) + 1 }, (_, i) => nested(i));
    res = await server.api(`/pipelines/${pipeline.id}/topology`, { method: "PUT", token: editor, json: linear([filter(longest)]) });
    error = ((await res.json()) as ErrorBody).error;
    expect({ status: res.status, code: error.code, paths: error.details.map((d) => d.path) }).toEqual({
      status: 400,
      code: "validation_failed",
      paths: ["topology.nodes"],
    });

    expect(await server.call(`/pipelines/${pipeline.id}/topology`)).toEqual(before);
  });
});
