import { expect, test } from "bun:test";
import type { Collector } from "../../shared/collectors.ts";
import type { Snapshot } from "../configstore/layout.ts";
import { byId, loadCase } from "../render/testdata/load.ts";
import { renderOtelcol } from "../render/otelcol.ts";
import { fleetRenderer } from "./renderer.ts";

const base = loadCase("branching").raw;
const at = "2026-01-01T00:00:00.000Z";
const collector = (id: string, managementMode: Collector["managementMode"] = "opamp"): Collector => ({
  id,
  name: id,
  environment: null,
  managementMode,
  tags: {},
  status: "pending",
  lastSeen: null,
  health: null,
  createdAt: at,
  updatedAt: at,
});

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
  const render = fleetRenderer(snap);
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
  const render = fleetRenderer(snap);
  render(collector("a"));
  expect(() => render(collector("d"))).toThrow(/not active on collector 'd'/);
});

test("a collector's reported service.version picks upstream's names; equal versions share bytes", () => {
  const render = fleetRenderer(snapshot());
  const reported = (id: string, version: string) => ({ ...collector(id), tags: { "service.version": version } });
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
  const render = fleetRenderer(fleetSnapshot());
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
  const byEnvironment = fleetRenderer({
    ...fleetSnapshot(),
    pipelines: new Map([["p-fleet", { ...fleetSnapshot().pipelines.get("p-fleet")!, matchers: ["environment=prod", 'collector.id=~"edge-.*"'] }]]),
  });
  expect(byEnvironment({ ...collector("edge-1"), environment: "prod" }).body).toContain("filelog/system_logs:");
  expect(byEnvironment({ ...collector("core-1"), environment: "prod" }).body).not.toContain("filelog");
});

test("a stored matcher that does not parse (written around the API) is a ValidationError naming it", () => {
  const snap = fleetSnapshot();
  snap.pipelines.set("p-fleet", { ...snap.pipelines.get("p-fleet")!, matchers: ["env=prod", "region=~("] });
  expect(() => fleetRenderer(snap)).toThrow(/pipelines\[p-fleet\]\.matchers\[1\]/);
});
