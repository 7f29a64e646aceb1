/**
 * Topology render time, and what publish costs around it.
 * `bun bench/render.ts [collectors=2000] [rounds=2000]`:
 *  1. renders each golden case (server/render/testdata) `rounds` times per
 *     runtime after a warm-up, reporting the median per render;
 *  2. renders one large collector: 12 sources, 12 pipelines of 8 processors,
 *     4 destinations, 12 routes;
 *  3. builds a fleet of `collectors` through the real services on a SQLite
 *     file and a git repository (each collector with its activations and a
 *     route), commits it, and times a fleet publish, then a second publish
 *     with nothing changed.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { createApp } from "../server/app.ts";
import { SYSTEM_ACTOR } from "../server/audit/audit.ts";
import { loadConfig } from "../server/config/load.ts";
import type { PipelineRecord, TopologyNode } from "../shared/config-records.ts";
import type { CollectorConfigInput } from "../server/catalog/render-input.ts";
import { renderAlloy } from "../server/render/alloy.ts";
import { renderOtelcol } from "../server/render/otelcol.ts";
import { renderPipelinePreview } from "../server/render/preview.ts";
import { byId, loadCase, TESTDATA } from "../server/render/testdata/load.ts";
import { SqliteStore } from "../server/store/sqlite.ts";

const [fleetSize = 2000, rounds = 2000] = process.argv.slice(2).map(Number);

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

/** Median microseconds per call, timed in batches of 50 so the clock's own cost stays out. */
function time(fn: () => unknown): number {
  for (let i = 0; i < 200; i++) fn();
  const batches: number[] = [];
  for (let done = 0; done < rounds; done += 50) {
    const start = Bun.nanoseconds();
    for (let i = 0; i < 50; i++) fn();
    batches.push((Bun.nanoseconds() - start) / 50 / 1000);
  }
  return median(batches);
}

const us = (n: number) => `${n.toFixed(1)} µs`;

console.log(`## Golden cases (${rounds} renders each)\n`);
console.log("| case | otelcol | alloy |\n|---|---|---|");
for (const name of readdirSync(TESTDATA, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort()) {
  const c = loadCase(name);
  const render = (runtime: "otelcol" | "alloy") =>
    c.preview
      ? () => renderPipelinePreview(c.preview!.pipeline, c.preview!.sources, c.preview!.destinations, runtime)
      : () => (runtime === "alloy" ? renderAlloy(c.input!) : renderOtelcol(c.input!));
  console.log(`| ${name} | ${us(time(render("otelcol")))} | ${us(time(render("alloy")))} |`);
}

function largeCollector(): CollectorConfigInput {
  const sources = Array.from({ length: 12 }, (_, i) => ({
    id: `src-${i}`,
    name: `Apps ${i}`,
    type: "filelog",
    config: { include: [`/var/log/app-${i}/*.log`], start_at: "end" },
  }));
  const destinations = [
    { id: "dst-0", name: "Gateway", type: "otlp", config: { endpoint: "gateway.internal:4317" } },
    { id: "dst-1", name: "Loki", type: "loki", config: { endpoint: "http://loki:3100/" } },
    { id: "dst-2", name: "Backup", type: "otlphttp", config: { endpoint: "https://backup.example.com" } },
    {
      id: "dst-3",
      name: "Archive",
      type: "otlphttp",
      config: { endpoint: "https://archive.example.com", headers: { Authorization: { secret: Bun.randomUUIDv7() } } },
    },
  ];
  const pipelines: PipelineRecord[] = Array.from({ length: 12 }, (_, i) => {
    const processors: TopologyNode[] = Array.from({ length: 8 }, (_, j) => ({
      id: `p${j}`,
      kind: "processor",
      processor:
        j % 4 === 0
          ? { type: "filter", config: { error_mode: "ignore", logs: { log_record: [`IsMatch(body, "/healthz${j}")`, `severity_number < ${j + 1}`] } } }
          : j % 4 === 1
            ? { type: "attributes", config: { actions: [{ key: `k${j}`, action: "upsert", value: `v${i}` }] } }
            : j % 4 === 2
              ? { type: "resource", config: { attributes: [{ key: "deployment.environment", action: "upsert", value: "prod" }] } }
              : { type: "batch", config: { send_batch_size: 1000, timeout: "5s" } },
    }));
    const nodes: TopologyNode[] = [
      { id: "in", kind: "source" },
      ...processors,
      { id: "out-a", kind: "destination", ref: `dst-${i % 4}` },
      { id: "out-b", kind: "destination", ref: `dst-${(i + 1) % 4}` },
    ];
    const chain = ["in", ...processors.map((p) => p.id)];
    const edges = chain.slice(1).map((id, j) => ({ id: `e${j}`, source: chain[j]!, target: id }));
    edges.push({ id: "ea", source: "p7", target: "out-a" }, { id: "eb", source: "p7", target: "out-b" });
    return { id: `pl-${i}`, name: `Pipeline ${i}`, signal: "logs", topology: { nodes, edges } };
  });
  return {
    collector: { id: "big", name: "big" },
    sources: byId(sources),
    destinations: byId(destinations),
    pipelines: byId(pipelines),
    activations: {
      collectorId: "big",
      sources: sources.map((s) => ({ sourceId: s.id, configOverrides: {} })),
      destinations: destinations.map((d) => ({ destinationId: d.id, configOverrides: {}, tags: {} })),
    },
    routes: pipelines.map((p, i) => ({ id: `r-${i}`, collectorId: "big", sourceId: `src-${i}`, pipelineId: p.id })),
  };
}

const big = largeCollector();
console.log(`\n## One large collector (12 routes × 8 processors, 4 destinations)\n`);
console.log(`| otelcol | alloy | YAML size |\n|---|---|---|`);
console.log(`| ${us(time(() => renderOtelcol(big)))} | ${us(time(() => renderAlloy(big)))} | ${renderOtelcol(big).length} bytes |`);

const dir = mkdtempSync(join(tmpdir(), "svc-bench-render-"));
const config = loadConfig({ path: null, env: { SVC_STORAGE_BOLTPATH: join(dir, "state.db") } });
const store = new SqliteStore(join(dir, "state.db"));
const app = await createApp(config, store, pino({ level: "warn" }));
const who = SYSTEM_ACTOR;

let started = performance.now();
const source = await app.sources.create(who, { name: "Apps", type: "filelog", config: { include: ["/var/log/app/*.log"] } });
const destination = await app.destinations.create(who, { name: "Gateway", type: "otlp", config: { endpoint: "gateway.internal:4317" } });
const pipeline = await app.pipelines.create(who, {
  name: "App logs",
  signal: "logs",
  topology: {
    nodes: [
      { id: "in", kind: "source" },
      { id: "health", kind: "processor", processor: { type: "filter", config: { logs: { log_record: ['IsMatch(body, "/healthz")'] } } } },
      { id: "batch", kind: "processor", processor: { type: "batch", config: {} } },
      { id: "out", kind: "destination", ref: destination.id },
    ],
    edges: [
      { id: "e1", source: "in", target: "health" },
      { id: "e2", source: "health", target: "batch" },
      { id: "e3", source: "batch", target: "out" },
    ],
  },
});
for (let i = 0; i < fleetSize; i++) {
  const collector = await app.collectors.create(who, { name: `edge-${i}`, managementMode: i % 2 ? "rcfg-remotecfg" : "opamp", tags: { site: `s${i % 10}` } });
  await app.activations.activateSource(who, collector.id, { sourceId: source.id, configOverrides: i % 10 === 0 ? { start_at: "beginning" } : {} });
  await app.activations.activateDestination(who, collector.id, { destinationId: destination.id });
  await app.routes.create(who, { collectorId: collector.id, sourceId: source.id, pipelineId: pipeline.id });
}
const seeded = performance.now() - started;
started = performance.now();
await app.configStore.commit(who, `fleet of ${fleetSize}`);
const committed = performance.now() - started;
started = performance.now();
const first = await app.rollouts.publish(who);
const published = performance.now() - started;
started = performance.now();
const second = await app.rollouts.publish(who);
const republished = performance.now() - started;

console.log(`\n## Fleet of ${fleetSize} collectors (SQLite file, git repository)\n`);
console.log("| step | time |\n|---|---|");
console.log(
  `| edits through the services (${fleetSize * 4} calls) | ${(seeded / 1000).toFixed(2)} s (${((seeded / fleetSize / 4) * 1000).toFixed(0)} µs a call) |`,
);
console.log(`| commit of ${fleetSize * 2 + 3} files | ${committed.toFixed(0)} ms |`);
console.log(`| first publish (${first.changed.length} changed) | ${published.toFixed(0)} ms |`);
console.log(`| second publish, nothing changed (${second.changed.length} changed) | ${republished.toFixed(0)} ms |`);

await app.stop();
await store.close();
rmSync(dir, { recursive: true, force: true });
