/**
 * Attribute injection over HTTP and the real channels (issue 22, part 3): a
 * config string may reference a collector attribute as `{{attr "KEY"}}`; a
 * publish renders it per collector, quoted for each runtime, and delivers it
 * over OpAMP and remote configuration. What the collectors receive is read
 * back as they read it: Runtime O's YAML by Go's gopkg.in/yaml.v3
 * (test/yamlv3) with the collector's `$$` escape undone, Runtime R's strings
 * unquoted as Go does (JSON's escapes are Go's), the resource processor's
 * value once more inside its OTTL literal. A collector lacking an attribute
 * its config references is skipped by a fleet publish, which names collector
 * and key and goes on with the rest (issue 33 part 4); a publish naming it is
 * refused; a malformed or misplaced reference is a 400 naming the key path.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestServer, type TestServer } from "../harness.ts";
import { remoteConfigClient } from "../remotecfg/client.ts";
import { description, RawAgent } from "../opamp/helpers.ts";
import { decodeYamlV3, type GoValue } from "../yamlv3/yamlv3.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.stop());

const call = <T = Record<string, unknown>>(path: string, method?: string, json?: unknown) => server.call<T>(path, method, json);

interface ApiError {
  error: { code: string; message: string; details: { path: string; message: string }[] };
}

async function refused(path: string, method: string, json: unknown): Promise<{ status: number; body: ApiError }> {
  const res = await server.api(path, { method, json });
  return { status: res.status, body: (await res.json()) as ApiError };
}

/** A value every quoting layer must carry exactly: quotes, backslashes, `$`, the collector's own expansion, braces, a reference's text, non-ASCII, a backtick. */
const AWKWARD = 'q"uo\\te $HOME ${env:SECRET} }} {{attr "x"}} 日本 ✓ `t`';

/** A pipeline of the matched collectors: a source, a resource processor setting `team` from an attribute, and `destination`. */
async function fleetPipeline(name: string, matchers: string[], sourceId: string, destinationId: string, team: string) {
  return call<{ id: string }>("/pipelines", "POST", {
    name,
    signal: "logs",
    matchers,
    topology: {
      nodes: [
        { id: "in", kind: "source", ref: sourceId },
        { id: "res", kind: "processor", processor: { type: "resource", config: { attributes: [{ key: "team", action: "upsert", value: team }] } } },
        { id: "out", kind: "destination", ref: destinationId },
      ],
      edges: [
        { id: "e1", source: "in", target: "res" },
        { id: "e2", source: "res", target: "out" },
      ],
    },
  });
}

/** The value at `keys` in a decoded yaml.v3 document (maps by key, lists by index). */
function at(value: GoValue, ...keys: (string | number)[]): GoValue {
  let v = value;
  for (const key of keys) {
    if (typeof key === "number") v = (v.value as GoValue[])[key]!;
    else v = (v.value as { key: GoValue; value: GoValue }[]).find((e) => e.key.value === key)!.value;
  }
  return v;
}

test("references are filled in per collector and delivered in both runtimes; awkward values read back exactly", async () => {
  const source = await call<{ id: string }>("/sources", "POST", {
    name: "apps",
    type: "otlp",
    config: { grpc: { endpoint: '{{attr "bind"}}:4317' }, http: { enabled: false } },
  });
  const destination = await call<{ id: string }>("/destinations", "POST", {
    name: "regional",
    type: "otlphttp",
    config: { endpoint: 'https://{{attr "datacenter"}}.example.com:4318', headers: { "X-Tenant": { value: 'tenant {{attr "tenant"}}', secret: false } } },
  });
  // A read shows the references as written.
  expect(await call(`/destinations/${destination.id}`)).toMatchObject({ config: { endpoint: 'https://{{attr "datacenter"}}.example.com:4318' } });
  const pipeline = await fleetPipeline("injected", ["fleet=inj"], source.id, destination.id, '{{attr "team"}}');
  // The preview has no collector: it shows the references as written.
  const topology = await call(`/pipelines/${pipeline.id}/topology`);
  for (const runtime of ["otelcol", "alloy"]) {
    const { config } = await call<{ config: string }>(`/pipelines/${pipeline.id}/topology/preview?runtime=${runtime}`, "POST", topology);
    expect(config).toContain(String.raw`https://{{attr \"datacenter\"}}.example.com:4318`);
    expect(config).toContain("team");
  }

  // Runtime O reports its attributes over OpAMP; Runtime R's are set in svc as tags.
  const otel = await call<{ id: string }>("/collectors", "POST", { name: "otel-fra", tags: { fleet: "inj" } });
  const alloy = await call<{ id: string }>("/collectors", "POST", {
    name: "alloy-ams",
    managementMode: "rcfg-remotecfg",
    tags: { fleet: "inj", bind: "127.0.0.1", datacenter: "ams", tenant: AWKWARD, team: `${AWKWARD} alloy` },
  });
  const otelToken = (await call<{ token: string }>(`/collectors/${otel.id}/otlp-token`, "POST")).token;
  const agent = await RawAgent.connect(`${server.base.replace(/^http/, "ws")}/v1/opamp`, otelToken);
  await agent.call({
    agentDescription: description({ "service.name": "otel-fra" }, { bind: "0.0.0.0", datacenter: "fra", tenant: AWKWARD, team: `${AWKWARD} otel` }),
  });
  const pushed = agent.next((m) => m.remoteConfig !== undefined);

  await call("/commit", "POST", { message: "Injected endpoint, tenant and team" });
  const rollout = await call<{ changed: string[] }>("/publish", "POST");
  expect(rollout.changed.sort()).toEqual([otel.id, alloy.id].sort());

  const message = await pushed;
  agent.close();
  const yaml = new TextDecoder().decode(message.remoteConfig!.config!.configMap[""]!.body);
  expect(yaml).not.toContain(String.raw`{{attr \"team\"}}`);
  const [decoded] = decodeYamlV3([yaml]);
  expect(decoded!.error).toBeUndefined();
  const doc = decoded!.value!;
  // The collector's confmap turns `$$` back into `$`; nothing else is expanded.
  const read = (v: GoValue) => {
    expect(v.type).toBe("string");
    return (v.value as string).replaceAll("$$", "$");
  };
  expect(read(at(doc, "receivers", "otlp/apps", "protocols", "grpc", "endpoint"))).toBe("0.0.0.0:4317");
  expect(read(at(doc, "exporters", "otlphttp/regional", "endpoint"))).toBe("https://fra.example.com:4318");
  expect(read(at(doc, "exporters", "otlphttp/regional", "headers", "X-Tenant"))).toBe(`tenant ${AWKWARD}`);
  expect(read(at(doc, "processors", "resource/injected_apps_res", "attributes", 0, "value"))).toBe(`${AWKWARD} otel`);
  // What was pushed is the stored target, whose hash is of the filled-in body.
  const target = (await server.app.delivery.target(otel.id))!.rendered;
  expect(target.body).toBe(yaml);
  expect(target.hash).toBe(new Bun.CryptoHasher("sha256").update(yaml).digest("hex"));

  const alloyToken = (await call<{ token: string }>(`/collectors/${alloy.id}/otlp-token`, "POST")).token;
  const answer = await remoteConfigClient(server.base, alloyToken).getConfig({ id: alloy.id });
  const text = answer.content;
  expect(text).toContain('endpoint = "127.0.0.1:4317"');
  expect(text).toContain('endpoint = "https://ams.example.com:4318"');
  expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f]/);
  expect(JSON.parse(/"X-Tenant" = (".*")\}/.exec(text)![1]!)).toBe(`tenant ${AWKWARD}`);
  const [statement] = JSON.parse(/statements = (\[.*\])/.exec(text)![1]!) as string[];
  expect(JSON.parse(/^set\(attributes\["team"\], (".*")\)$/.exec(statement!)![1]!)).toBe(`${AWKWARD} alloy`);
});

test("a collector lacking a referenced attribute is skipped by a fleet publish naming collector and key, and refuses a publish naming it; only records it runs count", async () => {
  const source = await call<{ id: string }>("/sources", "POST", { name: "syslog", type: "filelog", config: { include: ["/var/log/syslog"] } });
  const destination = await call<{ id: string }>("/destinations", "POST", { name: "gw", type: "otlp", config: { endpoint: '{{attr "gateway"}}:4317' } });
  // Nothing runs this one, and its pipeline's matchers select no collector: its reference fails nobody.
  const unused = await call<{ id: string }>("/destinations", "POST", { name: "unused", type: "otlp", config: { endpoint: '{{attr "nowhere"}}:4317' } });
  await fleetPipeline("nobody", ["fleet=none"], source.id, unused.id, "static");
  await fleetPipeline("gateway", ["fleet=gw"], source.id, destination.id, "static");
  const ready = await call<{ id: string }>("/collectors", "POST", { name: "with-gw", tags: { fleet: "gw", gateway: "gw-1.internal" } });
  const lacking = await call<{ id: string }>("/collectors", "POST", { name: "without-gw", tags: { fleet: "gw" } });
  await call("/commit", "POST", { message: "Gateway per collector" });

  // Named, it is refused: the caller asked for that very collector.
  const { status, body } = await refused("/publish", "POST", { collectorIds: [ready.id, lacking.id] });
  expect(status).toBe(409);
  expect(body.error.code).toBe("render_failed");
  expect(body.error.details).toHaveLength(1);
  expect(body.error.details[0]!.path).toBe(`collectors/${lacking.id}`);
  expect(body.error.details[0]!.message).toContain("has no attribute 'gateway'");
  expect(body.error.details[0]!.message).toContain(`destinations[${destination.id}].config.endpoint`);
  expect(await server.app.delivery.target(ready.id)).toBeNull();

  // The fleet publish skips it with the reason and delivers the rest.
  const fleet = await call<{ changed: string[]; skipped: { collectorId: string; name: string; path: string | null; message: string }[] }>("/publish", "POST");
  expect(fleet.changed).toContain(ready.id);
  expect(fleet.skipped).toEqual([
    { collectorId: lacking.id, name: "without-gw", path: "attributes.gateway", message: expect.stringContaining("has no attribute 'gateway'") },
  ]);
  expect(await server.app.delivery.target(lacking.id)).toBeNull();

  // Given the attribute, the change is delivered as a rollout of kind attributes; each collector gets its own gateway.
  const edited = await call<{ id: string }>(`/collectors/${lacking.id}`, "PATCH", { tags: { fleet: "gw", gateway: "gw-2.internal" } });
  expect(edited).toMatchObject({ id: lacking.id });
  const { items } = await call<{ items: { kind: string; changed: number; actor: string }[] }>("/rollouts?limit=1");
  expect(items[0]).toMatchObject({ kind: "attributes", changed: 1, actor: "sa:admin" });
  expect((await server.app.delivery.target(ready.id))!.rendered.body).toContain('endpoint: "gw-1.internal:4317"');
  expect((await server.app.delivery.target(lacking.id))!.rendered.body).toContain('endpoint: "gw-2.internal:4317"');
});

test("a malformed or misplaced reference is a 400 naming the key path, on records, overrides and processors", async () => {
  const malformed = await refused("/destinations", "POST", { name: "bad", type: "otlphttp", config: { endpoint: "https://{{attr datacenter}}.example.com" } });
  expect(malformed.status).toBe(400);
  expect(malformed.body.error.details[0]!.path).toBe("config.endpoint");
  expect(malformed.body.error.details[0]!.message).toContain("column 9");

  const destination = await call<{ id: string }>("/destinations", "POST", { name: "gw2", type: "otlp", config: { endpoint: "gw:4317" } });
  const collector = await call<{ id: string }>("/collectors", "POST", { name: "override-me" });
  const override = await refused(`/collectors/${collector.id}/destinations`, "POST", {
    destinationId: destination.id,
    configOverrides: { endpoint: '{{attr "gw"}:4317' },
  });
  expect(override.status).toBe(400);
  expect(override.body.error.details[0]!.path).toBe("configOverrides.endpoint");
  // A well-formed one is taken.
  await call(`/collectors/${collector.id}/destinations`, "POST", { destinationId: destination.id, configOverrides: { endpoint: '{{attr "gw"}}:4317' } });

  const ottl = await refused("/pipelines", "POST", {
    name: "ottl",
    signal: "logs",
    topology: {
      nodes: [{ id: "f", kind: "processor", processor: { type: "filter", config: { logs: { log_record: ['attributes["dc"] == "{{attr "dc"}}"'] } } } }],
      edges: [],
    },
  });
  expect(ottl.status).toBe(400);
  expect(ottl.body.error.details[0]!.path).toBe("topology.nodes[0].processor.config.logs.log_record[0]");
  expect(ottl.body.error.details[0]!.message).toContain("OTTL");
});
