/**
 * Runtime O: OpenTelemetry Collector YAML (`receivers`, `processors`,
 * `exporters`, `service.pipelines`), deterministic byte for byte because it
 * is content-hashed to decide redelivery.
 *
 * A collector pipeline is linear, a flow's graph may branch. Each flow
 * becomes one `service.pipelines` entry per distinct processor path from its
 * source, named `<signal>/<flow>` (`<signal>/<flow>-<n>` when it branches),
 * whose exporters are every destination at the end of that path. A processor
 * on several paths is listed in each pipeline; the collector builds
 * processors per pipeline anyway. No connectors are needed, so the config
 * reads the way the graph is drawn.
 *
 * Every `$` in a value is written `$$`, the collector's escape, so OTTL
 * regexes and header values are never taken for `${env:…}` references; the
 * one reference written is a value the operator chose to take from the
 * collector host's environment (`{env: NAME}`).
 *
 * Scalars are written so Go's gopkg.in/yaml.v3 reads back the intended type:
 * the collector decodes its config with `yaml.Unmarshal` into `any` and then
 * with mapstructure, `WeaklyTypedInput: false` (opentelemetry-collector
 * confmap/provider/internal/provider.go, confmap/internal/decoder.go; see
 * test/peers/yamlv3/main.go), so a plain `2023-06-01`, `0b101` or `1_000` would
 * arrive as a time or an int where a string is wanted. Every string value is
 * therefore double-quoted (as a JSON string, which is valid YAML), numbers
 * and booleans stay plain, and a key stays plain only when it is an
 * identifier yaml.v3 cannot resolve as anything but a string (`endpoint`,
 * `otlp/gateway`, `X-Scope-OrgID`); any other key is quoted too.
 */
import { Document, isMap, isScalar, Scalar, visit } from "yaml";
import type { OtelcolTarget } from "../catalog/index.ts";
import { versionProblem } from "../catalog/upstream/tables.ts";
import { parseCollectorVersion, UNKNOWN_TARGET } from "../catalog/versions.ts";
import { ValidationError } from "../errors.ts";
import type { CollectorConfigInput } from "../catalog/render-input.ts";
import { HostEnvValue } from "../catalog/host-env.ts";
import { planCollector, type Flow, type Plan } from "./plan.ts";

/** The collector's full configuration, in the names its reported version accepts; `plan`: the input's, when already made. */
export function renderOtelcol(input: CollectorConfigInput, plan: Plan = planCollector(input, "otelcol")): string {
  const target: OtelcolTarget = { version: parseCollectorVersion(input.collector.version) };
  return renderOtelcolPlan(plan, ["Rendered by svc; delivered over OpAMP, local edits are replaced."], target);
}

interface Pipeline {
  receivers: string[];
  processors?: string[];
  exporters: string[];
}

export function renderOtelcolPlan(plan: Plan, header: readonly string[], target: OtelcolTarget = UNKNOWN_TARGET): string {
  if (plan.flows.length === 0) return renderIdle(header);
  const id = (type: string, name: string) => `${type}/${name}`;
  const comments = new Map<string, string[]>();

  const receivers: Record<string, unknown> = {};
  const receiverIds = new Map<string, string>();
  for (const s of plan.sources) {
    const component = s.type.otelcol(s.config as never, target);
    const tooOld = versionProblem(component.type, target);
    if (tooOld !== undefined) {
      throw new ValidationError(`The configuration cannot be rendered: source '${s.name}': ${tooOld}.`, [
        { path: "collector.version", message: `source '${s.name}': ${tooOld}` },
      ]);
    }
    const key = id(component.type, s.name);
    receivers[key] = component.config;
    receiverIds.set(s.name, key);
    comments.set(`receivers/${key}`, s.comments);
  }

  const exporters: Record<string, unknown> = {};
  const exporterIds = new Map<string, string>();
  for (const d of plan.destinations) {
    const component = d.type.otelcol(d.config as never, target);
    const key = id(component.type, d.name);
    exporters[key] = component.config;
    exporterIds.set(d.name, key);
    comments.set(`exporters/${key}`, d.comments);
  }

  const processors: Record<string, unknown> = {};
  const pipelines: Record<string, Pipeline> = {};
  for (const flow of plan.flows) {
    const processorIds = new Map<string, string>();
    for (const p of flow.processors) {
      const component = p.type.otelcol(p.config as never, flow.signal, target);
      const key = id(component.type, p.name);
      processors[key] = component.config;
      processorIds.set(p.name, key);
    }
    const paths = linearPaths(flow);
    paths.forEach((path, i) => {
      const name = paths.length === 1 ? `${flow.signal}/${flow.name}` : `${flow.signal}/${flow.name}-${i + 1}`;
      pipelines[name] = {
        receivers: [receiverIds.get(flow.source)!],
        ...(path.processors.length > 0 ? { processors: path.processors.map((p) => processorIds.get(p)!) } : {}),
        exporters: [...new Set(path.exporters.map((d) => exporterIds.get(d)!))].sort(),
      };
    });
  }

  const config = {
    receivers: sortKeys(receivers),
    ...(Object.keys(processors).length > 0 ? { processors: sortKeys(processors) } : {}),
    exporters: sortKeys(exporters),
    service: { pipelines: sortKeys(pipelines) },
  };
  return encode(config, header, comments);
}

/** The flow's graph cut into linear paths: each distinct processor sequence and the destinations it ends in. */
export function linearPaths(flow: Flow): { processors: string[]; exporters: string[] }[] {
  const processors = new Map(flow.processors.map((p) => [p.name, p]));
  const paths = new Map<string, { processors: string[]; exporters: string[] }>();
  const walk = (target: Flow["entry"][number], trail: string[]): void => {
    if (target.kind === "destination") {
      const key = trail.join(" ");
      const path = paths.get(key) ?? { processors: trail, exporters: [] };
      path.exporters.push(target.name);
      paths.set(key, path);
      return;
    }
    for (const next of processors.get(target.name)!.next) walk(next, [...trail, target.name]);
  };
  for (const target of flow.entry) walk(target, []);
  return [...paths.values()];
}

/** A collector must run at least one pipeline; with no routes it runs the no-op one. */
function renderIdle(header: readonly string[]): string {
  const config = {
    receivers: { nop: {} },
    exporters: { nop: {} },
    service: { pipelines: { "logs/idle": { receivers: ["nop"], exporters: ["nop"] } } },
  };
  return encode(config, [...header, "No routes: the collector idles on a no-op pipeline."], new Map());
}

function encode(config: Record<string, unknown>, header: readonly string[], comments: ReadonlyMap<string, string[]>): string {
  const doc = new Document(escapeDollars(config));
  doc.commentBefore = header.map((line) => ` ${line}`).join("\n");
  for (const section of ["receivers", "exporters"]) {
    const map = doc.get(section, true);
    if (!isMap(map)) continue;
    for (const pair of map.items) {
      const lines = isScalar(pair.key) ? comments.get(`${section}/${String(pair.key.value)}`) : undefined;
      if (isScalar(pair.key) && lines && lines.length > 0) pair.key.commentBefore = lines.map((line) => ` ${line}`).join("\n");
    }
  }
  visit(doc, {
    Scalar(key, node) {
      if (typeof node.value === "string") node.type = key === "key" && isPlainKey(node.value) ? Scalar.PLAIN : Scalar.QUOTE_DOUBLE;
    },
  });
  return doc.toString({ lineWidth: 0, doubleQuotedAsJSON: true });
}

/**
 * Starts with a letter or `_`, then letters, digits, `_ . / -`: yaml.v3
 * resolves such a plain scalar as a string unless it is one of its words for
 * true, false or null (resolve.go's table; `yes`/`no`/`on`/`off` are strings
 * to yaml.v3 but booleans to YAML 1.1 readers, so they are quoted as well).
 */
const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_./-]*$/;
const RESERVED_WORDS = new Set(["true", "false", "null", "yes", "no", "on", "off", "y", "n"]);

function isPlainKey(key: string): boolean {
  return PLAIN_KEY.test(key) && !RESERVED_WORDS.has(key.toLowerCase());
}

/**
 * `$` → `$$` in every string value; keys are not expanded by the collector
 * (confmap expand.go), so they stay as they are. A host environment value
 * is the one expansion meant: `${env:NAME}`, its name already restricted to
 * what the env provider takes (secrets/values.ts ENV_NAME).
 */
export function escapeDollars(value: unknown): unknown {
  if (typeof value === "string") return value.replaceAll("$", () => "$$");
  if (value instanceof HostEnvValue) return `\${env:${value.name}}`;
  if (Array.isArray(value)) return value.map(escapeDollars);
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, escapeDollars(v)]));
  }
  return value;
}

function sortKeys<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
