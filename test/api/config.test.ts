/**
 * The configuration API's refusals over HTTP: each bad input gets the one
 * error shape naming what is wrong, and nothing already stored changes.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../harness.ts";
import type { ErrorBody } from "../../server/http/schemas.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

const ok = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);

async function refused(path: string, method: string, json: unknown, status: number, code: string): Promise<ErrorBody["error"]> {
  const res = await server.api(path, { method, json });
  const body = (await res.json()) as ErrorBody;
  expect({ status: res.status, code: body.error?.code }).toEqual({ status, code });
  return body.error;
}

const paths = (error: ErrorBody["error"]) => error.details.map((d) => d.path);

function linear(destinationId: string, processors: { id: string; processor: { type: string; config?: unknown } }[] = []) {
  const nodes = [{ id: "in", kind: "source" }, ...processors.map((p) => ({ ...p, kind: "processor" })), { id: "out", kind: "destination", ref: destinationId }];
  return {
    nodes,
    edges: nodes.slice(1).map((node, i) => ({ id: `e${i}`, source: nodes[i]!.id, target: node.id })),
  };
}

describe("sources and destinations", () => {
  test("config is checked against the type's schema, naming the key", async () => {
    let error = await refused("/destinations", "POST", { name: "gw", type: "otlp", config: { endpoint: 4317 } }, 400, "validation_failed");
    expect(paths(error)).toContain("config.endpoint");
    error = await refused("/sources", "POST", { name: "x", type: "otlp", config: { grpc: { endpiont: "0.0.0.0:4317" } } }, 400, "validation_failed");
    expect(paths(error).join()).toContain("config.grpc");
    error = await refused("/sources", "POST", { name: "x", type: "no-such-type", config: {} }, 400, "validation_failed");
    expect(paths(error)).toContain("type");
    expect((await ok<{ items: unknown[] }>("/sources")).items).toEqual([]);
  });

  test("one still in use cannot be deleted, and the 409 names its users", async () => {
    const source = await ok<{ id: string }>("/sources", "POST", { name: "app", type: "filelog", config: { include: ["/var/log/app/*.log"] } });
    const collector = await ok<{ id: string }>("/collectors", "POST", { name: "in-use-1" });
    await ok(`/collectors/${collector.id}/sources`, "POST", { sourceId: source.id });
    const error = await refused(`/sources/${source.id}`, "DELETE", undefined, 409, "still_referenced");
    expect(error.details.map((d) => d.path).join()).toContain(collector.id);
    expect(await ok(`/sources/${source.id}`)).toMatchObject({ id: source.id, name: "app" });
  });
});

describe("strings no collector can take", () => {
  test("a header value with CR/LF or a value with U+2028 is a 400 naming the key, and nothing is stored", async () => {
    const before = (await ok<{ items: unknown[] }>("/destinations")).items.length;
    for (const [headers, path] of [
      [{ "X-Team": "ops\r\nX-Injected: 1" }, "config.headers.X-Team"],
      [{ Authorization: "Bearer a\nb" }, "config.headers.Authorization"],
      [{ "X-Team": "ops\u2028" }, "config.headers.X-Team"],
    ] as const) {
      const error = await refused(
        "/destinations",
        "POST",
        { name: "crlf", type: "otlphttp", config: { endpoint: "http://gw:4318", headers } },
        400,
        "validation_failed",
      );
      expect(paths(error)).toEqual([path]);
    }
    let error = await refused("/sources", "POST", { name: "ls", type: "filelog", config: { include: ["/var/log/a\u2028.log"] } }, 400, "validation_failed");
    expect(error.details).toEqual([{ path: "config.include[0]", message: expect.stringContaining("U+2028") }]);
    error = await refused("/sources", "POST", { name: "bom", type: "filelog", config: { include: ["/ok.log", "/var/\ufefflog"] } }, 400, "validation_failed");
    expect(paths(error)).toEqual(["config.include[1]"]);
    expect((await ok<{ items: unknown[] }>("/destinations")).items.length).toBe(before);
    expect((await ok<{ items: { name: string }[] }>("/sources")).items.map((s) => s.name)).not.toContain("ls");
  });

  test("a processor in a topology is checked too, and so are overrides", async () => {
    const destination = await ok<{ id: string }>("/destinations", "POST", { name: "dbg-chars", type: "debug", config: {} });
    const error = await refused(
      "/pipelines",
      "POST",
      {
        name: "bad chars",
        signal: "logs",
        topology: linear(destination.id, [{ id: "tag", processor: { type: "attributes", config: { actions: [{ key: "env\u007f", action: "delete" }] } } }]),
      },
      400,
      "validation_failed",
    );
    expect(paths(error)).toEqual(["topology.nodes[1].processor.config.actions[0].key"]);
    const gw = await ok<{ id: string }>("/destinations", "POST", { name: "gw-chars", type: "otlphttp", config: { endpoint: "http://gw:4318" } });
    const collector = await ok<{ id: string }>("/collectors", "POST", { name: "chars-1" });
    const override = await refused(
      `/collectors/${collector.id}/destinations`,
      "POST",
      { destinationId: gw.id, configOverrides: { headers: { "X-Team": "a\r\nb" } } },
      400,
      "validation_failed",
    );
    expect(paths(override)).toEqual(["configOverrides.headers.X-Team"]);
    expect((await ok<{ items: unknown[] }>(`/collectors/${collector.id}/destinations`)).items).toEqual([]);
  });
});

describe("activations", () => {
  test("unknown ids are 404; overrides must still satisfy the type's schema", async () => {
    const destination = await ok<{ id: string }>("/destinations", "POST", { name: "gw2", type: "otlp", config: { endpoint: "gw:4317" } });
    const collector = await ok<{ id: string }>("/collectors", "POST", { name: "act-1" });
    await refused(`/collectors/${collector.id}/sources`, "POST", { sourceId: "nope" }, 404, "not_found");
    await refused(`/collectors/nope/destinations`, "POST", { destinationId: destination.id }, 404, "not_found");
    const error = await refused(
      `/collectors/${collector.id}/destinations`,
      "POST",
      { destinationId: destination.id, configOverrides: { endpoint: "" } },
      400,
      "validation_failed",
    );
    expect(paths(error).join()).toContain("configOverrides.endpoint");
    await ok(`/collectors/${collector.id}/destinations`, "POST", {
      destinationId: destination.id,
      configOverrides: { endpoint: "other:4317" },
      tags: { tier: "gold" },
    });
    expect(await ok(`/collectors/${collector.id}/destinations`)).toMatchObject({
      items: [{ destinationId: destination.id, configOverrides: { endpoint: "other:4317" }, tags: { tier: "gold" } }],
    });
    await ok(`/collectors/${collector.id}/destinations/${destination.id}`, "DELETE");
    await refused(`/collectors/${collector.id}/destinations/${destination.id}`, "DELETE", undefined, 404, "not_found");
  });
});

describe("pipelines and topology", () => {
  test("each topology problem names its node or edge", async () => {
    const destination = await ok<{ id: string }>("/destinations", "POST", { name: "dbg", type: "debug", config: {} });
    const pipeline = await ok<{ id: string }>("/pipelines", "POST", { name: "topo", signal: "logs" });
    const error = await refused(
      `/pipelines/${pipeline.id}/topology`,
      "PUT",
      {
        nodes: [
          { id: "in", kind: "source" },
          { id: "a", kind: "processor", processor: { type: "batch" } },
          { id: "b", kind: "processor", processor: { type: "batch" } },
          { id: "out", kind: "destination", ref: destination.id },
        ],
        edges: [
          { id: "e1", source: "in", target: "a" },
          { id: "e2", source: "a", target: "b" },
          { id: "e3", source: "b", target: "a" },
          { id: "e4", source: "out", target: "ghost" },
        ],
      },
      400,
      "validation_failed",
    );
    expect(error.message).toContain("e4");
    expect(paths(error)).toContain("topology.edges[3].target");
    expect(await ok(`/pipelines/${pipeline.id}/topology`)).toEqual({ nodes: [], edges: [] });
  });

  test("an OTTL condition that does not parse is a 400 giving the column", async () => {
    const destination = await ok<{ id: string }>("/destinations", "POST", { name: "dbg-ottl", type: "debug", config: {} });
    const error = await refused(
      "/pipelines",
      "POST",
      {
        name: "bad ottl",
        signal: "logs",
        topology: linear(destination.id, [{ id: "f", processor: { type: "filter", config: { logs: { log_record: ['body == "a" and and'] } } } }]),
      },
      400,
      "validation_failed",
    );
    expect(error.details[0]).toMatchObject({ path: "topology.nodes[1].processor.config.logs.log_record[0]" });
    expect(error.details[0]!.message).toMatch(/column \d+/);
  });

  test("preview renders either runtime and saves nothing", async () => {
    const destination = await ok<{ id: string }>("/destinations", "POST", { name: "prev-gw", type: "otlp", config: { endpoint: "gw:4317" } });
    const pipeline = await ok<{ id: string }>("/pipelines", "POST", { name: "preview me", signal: "logs" });
    const graph = linear(destination.id, [{ id: "b", processor: { type: "batch", config: {} } }]);
    const yaml = await ok<{ config: string }>(`/pipelines/${pipeline.id}/topology/preview`, "POST", graph);
    expect(yaml.config).toContain("service:");
    expect(yaml.config).toContain("batch/");
    const alloy = await ok<{ config: string }>(`/pipelines/${pipeline.id}/topology/preview?runtime=alloy`, "POST", graph);
    expect(alloy.config).toContain("otelcol.processor.batch");
    expect(alloy.config).toContain("otelcol.exporter.otlp");
    await refused(`/pipelines/${pipeline.id}/topology/preview?runtime=vector`, "POST", graph, 400, "validation_failed");
    expect(await ok(`/pipelines/${pipeline.id}/topology`)).toEqual({ nodes: [], edges: [] });
  });
});

describe("dry-run", () => {
  const log = (body: string, attributes: Record<string, string> = {}) => ({
    body: { stringValue: body },
    attributes: Object.entries(attributes).map(([key, value]) => ({ key, value: { stringValue: value } })),
  });
  const input = (records: unknown[]) => ({ resourceLogs: [{ resource: { attributes: [] }, scopeLogs: [{ scope: {}, logRecords: records }] }] });

  test("the health-check template keeps exactly the other records", async () => {
    const { items } = await ok<{ items: { id: string; processor: unknown }[] }>("/processor-templates");
    const template = items.find((t) => t.id === "drop-health-check-logs")!;
    const pipeline = await ok<{ id: string }>("/pipelines", "POST", { name: "dry", signal: "logs" });
    const records = [
      log('10.0.0.1 - - "GET /healthz HTTP/1.1" 200'),
      log("order 42 shipped"),
      log("request done", { "http.target": "/ready" }),
      log("request done", { "url.path": "/api/orders" }),
      log('10.0.0.2 - - "GET /live HTTP/1.1" 200'),
    ];
    const result = await ok<{ output: { resourceLogs: { scopeLogs: { logRecords: { body: { stringValue: string } }[] }[] }[] }; steps: unknown[] }>(
      `/pipelines/${pipeline.id}/dry-run`,
      "POST",
      { input: input(records), processors: [{ id: "health", ...(template.processor as object) }] },
    );
    const kept = result.output.resourceLogs.flatMap((r) => r.scopeLogs.flatMap((s) => s.logRecords.map((l) => l.body.stringValue)));
    expect(kept).toEqual(["order 42 shipped", "request done"]);
    expect(result.steps).toEqual([{ nodeId: "health", type: "filter", in: 5, out: 2, dropped: [0, 2, 4] }]);
  });

  test("the result says whether it holds on both runtimes for each source type that may feed the pipeline", async () => {
    const destination = await ok<{ id: string }>("/destinations", "POST", { name: "dry-gw", type: "otlphttp", config: { endpoint: "https://gw.example.com" } });
    const syslog = await ok<{ id: string }>("/sources", "POST", { name: "dry-syslog", type: "syslog", config: {} });
    const severity = { id: "sev", processor: { type: "filter", config: { logs: { log_record: ["severity_number < SEVERITY_NUMBER_WARN"] } } } };
    const topology = linear(destination.id, [severity]);
    topology.nodes[0] = { id: "in", kind: "source", ref: syslog.id } as (typeof topology.nodes)[number];
    const pipeline = await ok<{ id: string }>("/pipelines", "POST", { name: "dry-runtimes", signal: "logs", topology });
    const records = [
      { severityNumber: 13, body: { stringValue: "<12>1 - h a - - - disk low" } },
      { severityNumber: 9, body: { stringValue: "<14>1 - h a - - - ok" } },
    ];

    const own = await ok<{ steps: unknown[]; runtimes: unknown[] }>(`/pipelines/${pipeline.id}/dry-run`, "POST", { input: input(records) });
    expect(own.steps).toEqual([{ nodeId: "sev", type: "filter", in: 2, out: 1, dropped: [1] }]);
    expect(own.runtimes).toEqual([{ sourceType: "syslog", holds: true, problems: [] }]);

    const body = { type: "filter", config: { logs: { log_record: ['IsMatch(body, "disk")'] } } };
    const other = await ok<{ runtimes: { sourceType: string; holds: boolean; problems: { path: string; message: string }[] }[] }>(
      `/pipelines/${pipeline.id}/dry-run`,
      "POST",
      { input: input(records), processors: [body] },
    );
    expect(other.runtimes.map((r) => [r.sourceType, r.holds, r.problems.map((p) => p.path)])).toEqual([
      ["syslog", false, ["processors[0].config.logs.log_record[0]"]],
    ]);
    expect(other.runtimes[0]!.problems[0]!.message).toContain("the message part only on Alloy (remote config)");
  });

  test("a transform is checked (a bad statement is a 400 naming its key path), run where the dry-run can, and marked not simulated where not", async () => {
    const destination = await ok<{ id: string }>("/destinations", "POST", {
      name: "dry-transform-gw",
      type: "otlphttp",
      config: { endpoint: "https://gw.example.com" },
    });
    const reshape = (statements: string[]) => ({
      id: "reshape",
      processor: { type: "transform", config: { log_statements: [{ context: "log", statements }] } },
    });
    const bad = await refused(
      "/pipelines",
      "POST",
      { name: "dry-transform-bad", signal: "logs", topology: linear(destination.id, [reshape(['set(attributes["a"] "b")'])]) },
      400,
      "validation_failed",
    );
    expect(paths(bad)).toEqual(["topology.nodes[1].processor.config.log_statements[0].statements[0]"]);
    const pipeline = await ok<{ id: string }>("/pipelines", "POST", {
      name: "dry-transform",
      signal: "logs",
      topology: linear(destination.id, [reshape(['set(attributes["env"], "prod")'])]),
    });
    const result = await ok<{ output: unknown; steps: unknown[] }>(`/pipelines/${pipeline.id}/dry-run`, "POST", { input: input([log("a")]) });
    expect(result.steps).toEqual([{ nodeId: "reshape", type: "transform", in: 1, out: 1, dropped: [] }]);
    expect(result.output).toEqual(input([log("a", { env: "prod" })]));
    const unrun = await ok<{ output: unknown; steps: unknown[] }>(`/pipelines/${pipeline.id}/dry-run`, "POST", {
      input: input([log("a")]),
      processors: [{ id: "mask", ...reshape(['replace_pattern(body, "a", "b")']).processor }],
    });
    expect(unrun.steps).toEqual([
      {
        nodeId: "mask",
        type: "transform",
        in: 1,
        out: 1,
        dropped: [],
        notSimulated: expect.stringMatching(/^the transform step was not simulated: log_statements\[0\]\.statements\[0\] calls replace_pattern/),
      },
    ]);
    expect(unrun.output).toEqual(input([log("a")]));
  });

  test("malformed input names the JSON path; over 10 MiB is 413", async () => {
    const pipeline = await ok<{ id: string }>("/pipelines", "POST", { name: "dry-bad", signal: "logs" });
    const error = await refused(
      `/pipelines/${pipeline.id}/dry-run`,
      "POST",
      { input: { resourceLogs: [{ scopeLogs: [{ logRecords: [{ body: { stringValue: 5 } }] }] }] } },
      400,
      "validation_failed",
    );
    expect(paths(error).join()).toContain("resourceLogs[0].scopeLogs[0].logRecords[0].body");
    const huge = "x".repeat(11 * 1024 * 1024);
    await refused(`/pipelines/${pipeline.id}/dry-run`, "POST", { input: input([log(huge)]) }, 413, "payload_too_large");
  });
});

describe("commit, publish, rollback", () => {
  test("refusals: empty message, nothing to commit, nothing to roll back; all audited when they succeed", async () => {
    await refused("/commit", "POST", { message: "  " }, 400, "validation_failed");
    await refused("/commit", "POST", {}, 400, "validation_failed");
    await ok("/commit", "POST", { message: "everything so far" });
    await refused("/commit", "POST", { message: "again" }, 409, "nothing_to_commit");

    const collector = await ok<{ id: string }>("/collectors", "POST", { name: "rb-1" });
    await refused(`/collectors/${collector.id}/rollback`, "POST", undefined, 409, "no_previous_config");
    await refused("/collectors/nope/rollback", "POST", undefined, 404, "not_found");
    await refused("/publish/nope", "POST", undefined, 404, "not_found");

    const { items } = await ok<{ items: { action: string; actor: string }[] }>("/audit?action=config.commit");
    expect(items.map((i) => i.actor)).toEqual(["sa:admin"]);
  });

  test("discard drops pending edits and leaves the committed ones", async () => {
    const before = await ok<{ items: { id: string }[] }>("/sources");
    await ok("/sources", "POST", { name: "scratch", type: "journald", config: {} });
    expect((await ok<{ items: unknown[] }>("/changes")).items).toHaveLength(1);
    await ok("/changes/discard", "POST");
    expect((await ok<{ items: unknown[] }>("/changes")).items).toEqual([]);
    expect((await ok<{ items: { id: string }[] }>("/sources")).items).toEqual(before.items);
  });

  test("commit history pages with a cursor", async () => {
    for (const n of [1, 2, 3]) {
      await ok("/sources", "POST", { name: `page ${n}`, type: "journald", config: {} });
      await ok("/commit", "POST", { message: `page ${n}` });
    }
    const first = await ok<{ items: { message: string }[]; nextCursor: string }>("/commits?limit=2");
    expect(first.items.map((c) => c.message)).toEqual(["page 3", "page 2"]);
    const second = await ok<{ items: { message: string }[] }>(`/commits?limit=2&cursor=${first.nextCursor}`);
    expect(second.items.map((c) => c.message)[0]).toBe("page 1");
    await refused("/commits?cursor=not-a-cursor", "GET", undefined, 400, "validation_failed");
  });
});
