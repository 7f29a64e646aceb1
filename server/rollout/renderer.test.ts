import { expect, test } from "bun:test";
import fc from "fast-check";
import { unwritableCharacter } from "../catalog/validate.ts";
import type { Collector } from "../../shared/collectors.ts";
import type { Snapshot } from "../configstore/layout.ts";
import { byId, loadCase } from "../render/testdata/load.ts";
import { renderOtelcol } from "../render/otelcol.ts";
import { type ConflictError, ValidationError } from "../errors.ts";
import { renderFleetAt } from "./fleet-render.ts";
import { filledFrom, fleetRenderer, renderedSourceTypes, type RenderedConfig } from "./renderer.ts";
import { RENDERED } from "./records.ts";
import { renderedWrites, storedRendered, TEMPLATES } from "./stored-rendered.ts";
import { SqliteStore } from "../store/sqlite.ts";
import { collectorRecord as collector } from "../testutil.ts";

/** No reported key trusted: matchers read set and virtual attributes only. */
const NO_KEYS: ReadonlySet<string> = new Set();
const NONE = () => NO_KEYS;

const base = loadCase("branching").raw;
/** The branching case's activations and route, copied to collectors a, b (equal) and c (own override). */
function snapshot(): Snapshot {
  const activations = base.activations!;
  const copy = (id: string, overrides: Record<string, unknown> = {}) => ({
    ...activations,
    collectorId: id,
    destinations: activations.destinations.map((d, i) => (i === 0 ? { ...d, configOverrides: overrides } : d)),
  });
  return {
    sources: byId(base.sources),
    destinations: byId(base.destinations),
    pipelines: byId(base.pipelines),
    activations: new Map([
      ["a", copy("a")],
      ["b", copy("b")],
      ["c", copy("c", { endpoint: "other.internal:4317" })],
    ]),
    routes: byId(["a", "b", "c"].map((id) => ({ id: `route-${id}`, collectorId: id, sourceId: "src-apps", pipelineId: "p-apps" }))),
  };
}

test("collectors with equal activations and routes share bytes; an override or another runtime does not", () => {
  const snap = snapshot();
  const render = fleetRenderer(snap, NONE);
  const [a, b, c] = ["a", "b", "c"].map((id) => render(collector(id)));
  expect(b).toBe(a!);
  expect(c!.hash).not.toBe(a!.hash);
  expect(c!.body).toContain("other.internal:4317");
  const alloy = render(collector("a", "rcfg-remotecfg"));
  expect(alloy.runtime).toBe("alloy");
  expect(alloy.hash).not.toBe(a!.hash);
  // The shared bytes are exactly what the collector's own render gives.
  const own = renderOtelcol({ collector: { id: "b", name: "b" }, ...snap, activations: snap.activations.get("b")!, routes: [snap.routes.get("route-b")!] });
  expect(a!.body).toBe(own);
});

test("a render problem names the collector it belongs to, even when another collector rendered fine first", () => {
  const snap = snapshot();
  snap.activations.set("d", { collectorId: "d", sources: [], destinations: [] });
  snap.routes.set("route-d", { id: "route-d", collectorId: "d", sourceId: "src-apps", pipelineId: "p-apps" });
  const render = fleetRenderer(snap, NONE);
  render(collector("a"));
  expect(() => render(collector("d"))).toThrow(/not active on collector 'd'/);
});

test("a collector's reported service.version picks upstream's names; equal versions share bytes", () => {
  const render = fleetRenderer(snapshot(), NONE);
  const reported = (id: string, version: string) => ({ ...collector(id), reported: { "service.version": version } });
  const old = render(collector("a"));
  expect(old.body).toContain("otlp/gateway:");
  expect(old.body).toContain("otlphttp/loki:");
  const current = render(reported("a", "0.147.0"));
  expect(current.body).toContain("otlp_grpc/gateway:");
  expect(current.body).toContain("otlp_http/loki:");
  expect(current.body).not.toMatch(/^ {2}otlp\/gateway:/m);
  expect(render(reported("b", "0.147.0"))).toBe(current);
  expect(render(reported("b", "0.143.0")).hash).toBe(old.hash);
  // Alloy's components do not depend on the version it reports.
  expect(render({ ...reported("a", "0.147.0"), managementMode: "rcfg-remotecfg" })).toBe(render(collector("a", "rcfg-remotecfg")));
});

/** The matched case's records, with its pipeline's matchers, and nothing naming any collector. */
function fleetSnapshot(): Snapshot {
  const raw = loadCase("matched").raw;
  return {
    sources: byId(raw.sources),
    destinations: byId(raw.destinations),
    pipelines: byId(raw.pipelines.filter((p) => p.id === "p-fleet")),
    activations: new Map(),
    routes: new Map(),
  };
}

test("a collector whose attributes match a pipeline's matchers runs it; one that stops matching loses it", () => {
  const render = fleetRenderer(fleetSnapshot(), NONE);
  const tagged = (id: string, tags: Record<string, string>, mode: Collector["managementMode"] = "opamp") => ({ ...collector(id, mode), tags });
  const prod = render(tagged("a", { env: "prod", region: "eu-west" }));
  expect(prod.body).toContain("filelog/system_logs:");
  expect(prod.body).toContain("logs/fleet_system_logs:");
  // Equal matches share bytes; the collector's id does not enter the config.
  expect(render(tagged("b", { env: "prod", region: "eu-north" }))).toBe(prod);
  // Regexps are fully anchored: "xeu-west" does not match eu-.*.
  const misses: Record<string, string>[] = [{ env: "prod", region: "xeu-west" }, { env: "staging", region: "eu-west" }, { region: "eu-west" }];
  for (const tags of misses) {
    const idle = render(tagged("a", tags));
    expect(idle.body).not.toContain("filelog");
    expect(idle.body).toContain("No routes");
  }
  const alloy = render(tagged("c", { env: "prod", region: "eu-west" }, "rcfg-remotecfg"));
  expect(alloy.body).toContain('loki.source.file "system_logs"');
  expect(alloy.body).toContain('otelcol.exporter.otlp "gateway"');
  // environment is an attribute too, and the virtual collector.id.
  const byEnvironment = fleetRenderer(
    {
      ...fleetSnapshot(),
      pipelines: new Map([["p-fleet", { ...fleetSnapshot().pipelines.get("p-fleet")!, matchers: ["environment=prod", 'collector.id=~"edge-.*"'] }]]),
    },
    NONE,
  );
  expect(byEnvironment({ ...collector("edge-1"), environment: "prod" }).body).toContain("filelog/system_logs:");
  expect(byEnvironment({ ...collector("core-1"), environment: "prod" }).body).not.toContain("filelog");
});

test("a reported attribute selects a pipeline only while its key is trusted; the renderer reads the trust of the moment", () => {
  let trusted: ReadonlySet<string> = NO_KEYS;
  const render = fleetRenderer(fleetSnapshot(), () => trusted);
  // Reports env=prod and region=eu-west, as the pipeline's matchers want: facts, not authority.
  const reporter = { ...collector("r"), reported: { env: "prod", region: "eu-west" } };
  expect(render(reporter).body).not.toContain("filelog");
  trusted = new Set(["env", "region"]);
  expect(render({ ...reporter }).body).toContain("filelog/system_logs:");
  // A tag wins over the report on the same key.
  expect(render({ ...reporter, tags: { env: "staging" } }).body).not.toContain("filelog");
});

test("a stored matcher that does not parse (written around the API) is a ValidationError naming it", () => {
  const snap = fleetSnapshot();
  snap.pipelines.set("p-fleet", { ...snap.pipelines.get("p-fleet")!, matchers: ["env=prod", "region=~("] });
  expect(() => fleetRenderer(snap, NONE)).toThrow(/pipelines\[p-fleet\]\.matchers\[1\]/);
});

/**
 * A fleet pipeline whose records reference attributes: a listen address, a
 * URL, a header marked not secret, and a resource attribute (an OTTL string
 * literal on Runtime R, two levels of quoting deep).
 */
function injected(records: { endpoint?: string; team?: string } = {}): Snapshot {
  const topology = {
    nodes: [
      { id: "in", kind: "source" as const, ref: "src" },
      {
        id: "res",
        kind: "processor" as const,
        processor: { type: "resource", config: { attributes: [{ key: "team", action: "upsert", value: records.team ?? 'team {{attr "team"}}' }] } },
      },
      { id: "out", kind: "destination" as const, ref: "gw" },
    ],
    edges: [
      { id: "e1", source: "in", target: "res" },
      { id: "e2", source: "res", target: "out" },
    ],
  };
  return {
    sources: byId([{ id: "src", name: "apps", type: "otlp", config: { grpc: { endpoint: '{{attr "bind"}}:4317' }, http: { enabled: false } } }]),
    destinations: byId([
      {
        id: "gw",
        name: "gateway",
        type: "otlphttp",
        config: {
          endpoint: records.endpoint ?? 'https://{{attr "datacenter"}}.example.com:4318',
          headers: { "X-Tenant": { value: '{{attr "tenant"}}', secret: false } },
        },
      },
    ]),
    pipelines: byId([{ id: "p", name: "fleet", signal: "logs" as const, matchers: ["env=prod"], topology }]),
    activations: new Map(),
    routes: new Map(),
  };
}

const attributes = { env: "prod", bind: "0.0.0.0", datacenter: "fra", tenant: "acme", team: "core" };
const withTags = (id: string, tags: Record<string, string>, mode: Collector["managementMode"] = "opamp"): Collector => ({ ...collector(id, mode), tags });

/** The snapshot with every reference written as the value it stands for. */
function literal(values: Record<string, string>): Snapshot {
  const text = (s: string) => s.replace(/\{\{attr "([^"]+)"\}\}/g, (_, key: string) => values[key]!);
  const snap = injected();
  const fill = (value: unknown): unknown =>
    typeof value === "string"
      ? text(value)
      : Array.isArray(value)
        ? value.map(fill)
        : typeof value === "object" && value !== null
          ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v)]))
          : value;
  return fill({
    ...snap,
    sources: [...snap.sources.values()],
    destinations: [...snap.destinations.values()],
    pipelines: [...snap.pipelines.values()],
  }) as never;
}

test("references are filled in per collector in both runtimes; equal values share bytes, and the hash is of the filled-in body", () => {
  const render = fleetRenderer(injected(), NONE);
  const a = render(withTags("a", attributes));
  expect(a.body).toContain('endpoint: "https://fra.example.com:4318"');
  expect(a.body).toContain('endpoint: "0.0.0.0:4317"');
  expect(a.body).toContain('X-Tenant: "acme"');
  expect(a.body).not.toContain("{{attr");
  expect(a.hash).toBe(new Bun.CryptoHasher("sha256").update(a.body).digest("hex"));
  expect(render(withTags("b", attributes))).toBe(a);
  const other = render(withTags("c", { ...attributes, datacenter: "ams" }));
  expect(other.body).toContain('endpoint: "https://ams.example.com:4318"');
  expect(other.hash).not.toBe(a.hash);
  // Exactly the bytes the same config with the values written in renders to.
  const raw = literal(attributes) as unknown as { sources: never[]; destinations: never[]; pipelines: never[] };
  const plain = { sources: byId(raw.sources), destinations: byId(raw.destinations), pipelines: byId(raw.pipelines), activations: new Map(), routes: new Map() };
  expect(a.body).toBe(fleetRenderer(plain, NONE)(withTags("a", attributes)).body);

  const alloy = render(withTags("d", attributes, "rcfg-remotecfg"));
  expect(alloy.body).toContain('endpoint = "https://fra.example.com:4318"');
  expect(alloy.body).toContain(String.raw`statements = ["set(attributes[\"team\"], \"team core\")"]`);
  expect(alloy.body).not.toContain("{{attr");
});

/** Values a runtime's quoting must carry exactly: quotes, backslashes, `$`, the collector's expansion, braces, non-ASCII, backticks, a line feed. */
const AWKWARD = ['a"b', "back\\slash\\", "$HOME $$", "${env:SECRET}", "}}", '{{attr "team"}}', "日本語 ✓ 😀", "`tick`", "line\nfeed", '\\"', "tab\there"];

test("awkward values read back exactly: Runtime O's YAML (with the collector's $$ escape) and Alloy strings, OTTL literal included", async () => {
  const { parse } = await import("yaml");
  const render = fleetRenderer(injected(), NONE);
  for (const value of AWKWARD) {
    const tags = { ...attributes, tenant: value.replaceAll("\n", " ").replaceAll("\t", " ").trim(), team: value };
    const otel = parse(render(withTags("o", tags)).body) as Record<string, Record<string, Record<string, unknown>>>;
    const unescapeDollars = (s: string) => s.replaceAll("$$", "$");
    const resource = otel.processors!["resource/fleet_apps_res"] as { attributes: { value: string }[] };
    expect(unescapeDollars(resource.attributes[0]!.value)).toBe(`team ${value}`);
    const exporter = otel.exporters!["otlphttp/gateway"] as { headers: Record<string, string> };
    expect(unescapeDollars(exporter.headers["X-Tenant"]!)).toBe(tags.tenant);

    const alloy = render(withTags("r", tags, "rcfg-remotecfg")).body;
    expect(alloy).not.toMatch(/[\u0000-\u0008\u000b-\u001f]/);
    const header = /"X-Tenant" = (".*")\}/.exec(alloy)![1]!;
    expect(JSON.parse(header)).toBe(tags.tenant);
    const statements = JSON.parse(/statements = (\[.*\])/.exec(alloy)![1]!) as string[];
    const literalText = /^set\(attributes\["team"\], (".*")\)$/.exec(statements[0]!)![1]!;
    expect(JSON.parse(literalText)).toBe(`team ${value}`);
  }
});

test("filled-in configs are stored as values beside one template per render key and read back as the bytes rendered", async () => {
  const store = new SqliteStore(":memory:");
  const render = fleetRenderer(injected(), NONE);
  const configs: RenderedConfig[] = [];
  for (const [i, value] of AWKWARD.entries()) {
    const tags = { ...attributes, tenant: value.replaceAll("\n", " ").replaceAll("\t", " ").trim(), team: value };
    configs.push(render(withTags(`o${i}`, tags)), render(withTags(`r${i}`, tags, "rcfg-remotecfg")));
  }
  const raw = literal(attributes) as unknown as { sources: never[]; destinations: never[]; pipelines: never[] };
  const plain = { sources: byId(raw.sources), destinations: byId(raw.destinations), pipelines: byId(raw.pipelines), activations: new Map(), routes: new Map() };
  const whole = fleetRenderer(plain, NONE)(withTags("w", attributes));
  configs.push(whole);
  const ops = await renderedWrites(store, configs);
  // Planned by two writers at once: the second to store a template is refused (and plans again, finding it stored).
  const twin = await renderedWrites(store, configs.slice(0, 1));
  // One template per render key, stored before any config that names it; the config without references is stored whole.
  expect(ops.slice(0, 2).map((op) => op.collection)).toEqual([TEMPLATES, TEMPLATES]);
  expect(ops.filter((op) => op.collection === TEMPLATES)).toHaveLength(2);
  await store.write(ops);
  expect(await store.write(twin).catch((error: ConflictError) => error.code)).toBe("version_conflict");
  for (const config of configs) {
    const row = (await store.get<Record<string, unknown>>(RENDERED, config.hash))!.data;
    expect("body" in row).toBe(config === whole);
    expect(await storedRendered(store, config.hash)).toEqual({
      hash: config.hash,
      runtime: config.runtime,
      contentType: config.contentType,
      body: config.body,
    });
  }
  // A later publish filling the same templates stores only its configs.
  const again = await renderedWrites(store, [render(withTags("later", { ...attributes, tenant: "later" }))]);
  expect(again.map((op) => op.collection)).toEqual([RENDERED]);
  await store.close();
});

test("any value the catalog's character rule accepts fills in as the same value written in would render (Runtime O), and reads back (Runtime R)", () => {
  const render = fleetRenderer(injected(), NONE);
  fc.assert(
    fc.property(fc.string({ unit: "binary" }), (value) => {
      if (unwritableCharacter(value) !== undefined || value.includes("<secret:")) return;
      const values = { ...attributes, team: value };
      const raw = literal(values) as unknown as { sources: never[]; destinations: never[]; pipelines: never[] };
      const plain = {
        sources: byId(raw.sources),
        destinations: byId(raw.destinations),
        pipelines: byId(raw.pipelines),
        activations: new Map(),
        routes: new Map(),
      };
      expect(render(withTags("o", values)).body).toBe(fleetRenderer(plain, NONE)(withTags("o", values)).body);
      const alloy = render(withTags("r", values, "rcfg-remotecfg")).body;
      const [statement] = JSON.parse(/statements = (\[.*\])/.exec(alloy)![1]!) as string[];
      expect(JSON.parse(/^set\(attributes\["team"\], (".*")\)$/.exec(statement!)![1]!)).toBe(`team ${value}`);
    }),
    { numRuns: 300 },
  );
  // 900 renders: about 2 s alone, past bun's 5 s default on a machine busy with other work.
}, 60_000);

test("a collector lacking a referenced attribute cannot be rendered: the error names the key and the field that references it", () => {
  const render = fleetRenderer(injected(), NONE);
  const { datacenter: _, ...without } = attributes;
  let error: unknown;
  try {
    render(withTags("edge-1", without));
  } catch (e) {
    error = e;
  }
  expect(error).toBeInstanceOf(ValidationError);
  const detail = (error as ValidationError).details[0]!;
  expect(detail.path).toBe("attributes.datacenter");
  expect(detail.message).toContain("collector 'edge-1' has no attribute 'datacenter'");
  expect(detail.message).toContain("destinations[gw].config.endpoint");
  // A collector that does not run the pipeline needs none of its attributes.
  expect(render(withTags("staging", { env: "staging" })).body).toContain("No routes");
  // environment and the virtual collector.* attributes are attributes too; set ones win over reported ones.
  const byName = fleetRenderer(injected({ team: '{{attr "collector.name"}}/{{attr "environment"}}' }), NONE);
  const named = byName({
    ...withTags("edge-2", attributes),
    environment: "live",
    reported: { team: "x", datacenter: "reported" },
    tags: { ...attributes, datacenter: "set" },
  });
  expect(named.body).toContain('value: "edge-2/live"');
  expect(named.body).toContain("https://set.example.com");
  // References read reported values too (a value, not authority): a datacenter only reported fills in.
  expect(render({ ...withTags("edge-4", without), reported: { datacenter: "fra1" } }).body).toContain("https://fra1.example.com");
});

test("a filled-in value its field's format refuses, an unreadable character or a secret's marker names the collector and the place", () => {
  const render = fleetRenderer(injected(), NONE);
  const failure = (tags: Record<string, string>) => {
    try {
      render(withTags("edge-3", { ...attributes, ...tags }));
    } catch (e) {
      if (e instanceof ValidationError) return e.details[0]!;
      throw e;
    }
    throw new Error("rendered");
  };
  const url = failure({ datacenter: "fra west" });
  expect(url.path).toBe("destinations[gw].config.endpoint");
  expect(url.message).toContain("collector 'edge-3'");
  expect(url.message).toContain('"https://fra west.example.com:4318"');
  expect(url.message).toContain("http:// or https:// URL");
  const control = failure({ team: "a\u0007b" });
  expect(control.path).toBe("attributes.team");
  expect(control.message).toContain("U+0007");
  expect(control.message).toContain("pipelines[p].topology.nodes[res].processor.config.attributes[0].value");
  const marker = failure({ tenant: "<secret:0190d4c2-0000-7000-8000-000000000000>" });
  expect(marker.path).toBe("attributes.tenant");
  expect(marker.message).toContain("reserved for secrets");
});

test("a fleet rendered on another thread is the fleet rendered here: configs, failures, pins, source types and shared bytes", async () => {
  const snap = injected();
  const fleet: Collector[] = [];
  for (let i = 0; i < 60; i++) {
    // Distinct values, values shared by several, both runtimes, a collector lacking a referenced attribute, and one pinned.
    const { datacenter: _, ...without } = attributes;
    const tags = i % 13 === 5 ? without : { ...attributes, datacenter: `dc-${i % 7}`, tenant: `t-${i}` };
    fleet.push(withTags(`c${String(i).padStart(2, "0")}`, i % 4 === 0 ? { ...tags, tenant: "shared" } : tags, i % 3 === 0 ? "rcfg-remotecfg" : "opamp"));
  }
  const pinned = (id: string) => id === "c07" || id === "c08";
  const named = new Set(["c08"]);
  const here = await renderFleetAt(snap, NONE, fleet, pinned, named, Number.POSITIVE_INFINITY);
  const there = await renderFleetAt(snap, NONE, fleet, pinned, named, 0);
  expect(there.pinned.map((c) => c.id)).toEqual(["c07"]);
  expect(there.pinned).toEqual(here.pinned);
  expect(there.failed.length).toBeGreaterThan(0);
  expect(there.failed).toEqual(here.failed);
  expect(there.rendered.map((r) => r.collector.id)).toEqual(here.rendered.map((r) => r.collector.id));
  expect(there.rendered.map((r) => r.config)).toEqual(here.rendered.map((r) => r.config));
  for (const { config } of there.rendered) expect(renderedSourceTypes(config)).toEqual(["otlp"]);
  // Each is stored as it would be here: filled from the same template with the same values.
  const stored = (config: RenderedConfig) => {
    const filled = filledFrom(config)!;
    const { runtime, pieces, slots } = filled.template;
    return { id: filled.templateId, values: { ...filled.values }, template: { runtime, pieces, slots } };
  };
  expect(there.rendered.map((r) => stored(r.config))).toEqual(here.rendered.map((r) => stored(r.config)));
  // Collectors with equal bytes hold one config object, as they do here.
  const byHash = new Map<string, RenderedConfig>();
  for (const { config } of there.rendered) {
    if (byHash.has(config.hash)) expect(config).toBe(byHash.get(config.hash)!);
    byHash.set(config.hash, config);
  }
  expect(byHash.size).toBeLessThan(there.rendered.length);
});

test("a render that breaks on another thread (not a collector's render problem) fails the render, as it does here", async () => {
  // Written around the API: a pipeline without its topology.
  const snap = injected();
  for (const pipeline of snap.pipelines.values()) (pipeline as { topology: unknown }).topology = null;
  const fleet = [withTags("x", attributes)];
  await expect(renderFleetAt(snap, NONE, fleet, () => false, new Set(), Number.POSITIVE_INFINITY)).rejects.toThrow(TypeError);
  await expect(renderFleetAt(snap, NONE, fleet, () => false, new Set(), 0)).rejects.toThrow(/The render worker failed: TypeError/);
});
