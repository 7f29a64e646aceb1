/**
 * Drift: does the config a collector says it runs (its effective config, as
 * `TargetDelivery.setEffective` stores it, redacted) differ from the config svc
 * rendered for it (its target, secrets as markers) in what it runs, not merely
 * in how it is written? Pure: no store, no clock.
 *
 * What the comparison rests on, from upstream sources:
 *
 * Runtime O (otelcol under the OpAMP supervisor)
 * - The collector builds its effective config by decoding the resolved
 *   confmap into its typed config (components' `CreateDefaultConfig` values
 *   filled in), then `conf.Marshal(cfg)` back into a map: so it holds every
 *   default, `${env:X}` expanded, `$$` unescaped to `$`.
 *   open-telemetry/opentelemetry-collector otelcol/collector.go
 *   (`setupConfigurationComponents`) @934999fbab274d10cbf18704b4594a6fb2049887.
 * - `configopaque.String` marshals as `[REDACTED]` (config/configopaque/opaque.go,
 *   same revision); the opamp extension relies on that since contrib v0.105.0
 *   (open-telemetry/opentelemetry-collector-contrib PR #34078). Between
 *   v0.102.0 and v0.104.0 it redacted every primitive value (PR #33267), so
 *   `[REDACTED]` may stand in place of any scalar.
 * - Since core v0.139.0 client `headers` are a `configopaque.MapList`
 *   (config/configopaque/maplist.go; CHANGELOG-API v0.139.0, #13930) with no
 *   marshaler of its own, so they come back as a list of `{name, value}`
 *   pairs, values `[REDACTED]`; before, a map of `[REDACTED]`.
 * - The marshal has no hook for `time.Duration` (confmap/internal/encoder.go,
 *   confmap/internal/mapstructure/encoder.go): the value stays a Duration, which
 *   yaml.v3 writes as Go's `Duration.String()` (`60s` → `1m0s`; otelcol
 *   command_print_test.go expects `timeout: 5s` in YAML, `5000000000` in JSON).
 *   Component ids stay as written (a deprecated type alias is resolved at
 *   factory lookup, exporter/xexporter/exporter.go `WithDeprecatedTypeAlias`).
 * - The opamp extension sends `yaml.Marshal(effectiveConfig.ToStringMap())` as
 *   the one file `""` (`text/yaml`); an opt-in `raw` file holds the unexpanded
 *   config (contrib extension/opampextension/opamp_agent.go; PR #49692).
 *   yaml.v3 sorts keys and chooses its own quoting and indentation.
 * - The supervisor forwards only the collector's `""` file, and until the
 *   collector has reported it answers with its own merged config instead: the
 *   files it merged, unexpanded (`${env:X}` and `$$` as written, secrets in
 *   plaintext, which svc's redaction turns back into markers)
 *   (contrib cmd/opampsupervisor/supervisor/supervisor.go
 *   `handleAgentOpAMPMessage`, `createEffectiveConfigMsg`). opamp-go sends
 *   whatever `GetEffectiveConfig` returns each time `UpdateEffectiveConfig` is
 *   called (open-telemetry/opamp-go client/internal/clientcommon.go
 *   @42e6aa1eadf33c2a680a313350e47912e6a6ba4b).
 * - What the supervisor merges into the config the collector runs
 *   (supervisor.go `composeMergedConfig`; maps merged key by key, lists
 *   replaced, except `service.extensions`, concatenated without duplicates by
 *   `configMergeFunc`):
 *   - its opamp extension, `service.extensions: [opamp]` and a
 *     `service.telemetry.resource` attribute (templates/opampextension.yaml
 *     @03e7e4e761af4a47e7a6cf6a362bbb3978950dd8);
 *   - own telemetry as `service.telemetry.metrics.readers` (and logs, traces)
 *     (templates/owntelemetry.yaml @0b7f7932faa4c14b746b3bba3171a01a3aa15251);
 *     older supervisors added a `metrics/own_metrics` pipeline with
 *     `prometheus/own_metrics` and `otlphttp/own_metrics`, and
 *     `service.telemetry.metrics.address`
 *     (testdata/supervisor_test_merged_config.yaml @fa5ded71b723d39c3ca794404404312dee413b9c);
 *   - `service.telemetry.logs` encoding and output paths
 *     (templates/extratelemetryconfig.yaml @432a0e7093f680103eb6d9e0e1263140fb22347a);
 *     older ones a `health_check` extension (templates/extraconfig.yaml
 *     @2de7cd28c751af27b9a8140055169f4851f1ceaa);
 *   - with no remote config, a `nop` pipeline (templates/nooppipeline.yaml
 *     @2bcbb372ccc02c45de2b8d2aa43ebb3be9774f9a); svc's own bootstrap file
 *     (installer/templates/otelcol-bootstrap.yaml) adds a `nop` `metrics`
 *     pipeline that idles beside svc's.
 *
 * So for otelcol the target is what must hold: every key the target sets must
 * be in the effective config with an equal value, where `[REDACTED]` is equal
 * to any scalar, a `${…}` reference to whatever it expanded to, `$$` to `$`,
 * Go durations by length, numbers by value, a value the target leaves empty
 * to a key the collector omits (`omitempty`), and headers as pairs to headers
 * as a map. Keys the collector adds (defaults, the supervisor's settings) are
 * not drift. Pipelines are the exception: a pipeline the collector runs that
 * svc did not deliver is drift, unless it is the supervisor's or the
 * bootstrap's (only `nop` receivers and exporters, or `metrics/own_metrics`).
 * A pipeline's receivers and exporters compare as sets, its processors in
 * order, `service.extensions` as a subset of what runs; every other list in
 * order. Settings the supervisor owns are not
 * compared at all (`SUPERVISOR_OWNED`).
 *
 * Runtime R (Alloy remotecfg): since Alloy v1.12.0 (grafana/alloy PR #4714)
 * the effective config is the body of the remote config it last loaded
 * successfully, byte for byte, as file `""` (`text/plain`), reported only
 * when it changes (grafana/alloy internal/service/remotecfg/config_manager.go
 * `parseAndLoad`, `setEffectiveConfig` @66ebea856dffb242f921775e9552a133f60dc5c1).
 * Alloy neither expands `sys.env` nor reformats it, so the comparison is of
 * text: line endings, blank lines, whole-line comments and whitespace outside
 * string literals are ignored. Older Alloy reports none at all.
 */
import { createTwoFilesPatch } from "diff";
import { parse, stringify } from "yaml";

export interface EffectiveFile {
  name: string;
  contentType: string;
  body: string;
}

export interface Drift {
  drifted: boolean;
  /** A unified diff of normalized forms (target → effective), when drifted. */
  diff: string | null;
  /** Why drift could not be judged, or, when drifted, where the configs differ. */
  reason?: string;
}

/** What the opamp extension writes for a `configopaque` value (config/configopaque/opaque.go). */
export const REDACTED = "[REDACTED]";

/**
 * Paths the supervisor writes over whatever the remote config says (see the
 * header): a target value there is not compared. `*` is one key.
 */
const SUPERVISOR_OWNED: readonly (readonly string[])[] = [
  ["extensions", "opamp"],
  ["extensions", "health_check"],
  ["service", "telemetry", "resource"],
  ["service", "telemetry", "logs", "encoding"],
  ["service", "telemetry", "logs", "output_paths"],
  ["service", "telemetry", "logs", "error_output_paths"],
  ["service", "telemetry", "metrics", "readers"],
  ["service", "telemetry", "metrics", "address"],
  ["service", "telemetry", "logs", "processors"],
  ["service", "telemetry", "traces", "processors"],
];

/** How many differing paths `reason` names before "and N more". */
const REASON_PATHS = 5;

export function configDrift(runtime: "otelcol" | "alloy", target: string, effective: readonly EffectiveFile[]): Drift {
  const file = instanceFile(effective);
  if (file === null || file.body.trim() === "") return { drifted: false, diff: null, reason: "the collector reported no effective config" };
  return runtime === "otelcol" ? otelcolDrift(target, file.body) : alloyDrift(target, file.body);
}

/** The instance's own config: file `""` (what the supervisor forwards and Alloy sends), else the only file. */
function instanceFile(files: readonly EffectiveFile[]): EffectiveFile | null {
  return files.find((f) => f.name === "") ?? (files.length === 1 ? files[0]! : null);
}

// ---------------------------------------------------------------- otelcol

type Path = readonly string[];

interface Difference {
  path: Path;
  kind: "missing" | "different" | "unexpected";
}

function otelcolDrift(targetText: string, effectiveText: string): Drift {
  const target = readYaml(targetText);
  if (!isMap(target)) return { drifted: false, diff: null, reason: "the target is not a collector config" };
  const effective = readYaml(effectiveText);
  if (effective === undefined || !isMap(effective)) return { drifted: false, diff: null, reason: "the effective config is not YAML this comparison can read" };

  const differences: Difference[] = [];
  const projected = project(target, effective, [], differences);
  const extra = unexpectedPipelines(target, effective);
  for (const [name] of extra) differences.push({ path: ["service", "pipelines", name], kind: "unexpected" });
  if (differences.length === 0) return { drifted: false, diff: null };

  const shown = withPipelines(projected, extra);
  return {
    drifted: true,
    diff: unifiedDiff(yamlText(target), yamlText(shown)),
    reason: describe(differences),
  };
}

/** A YAML document as plain data; undefined when it does not parse. */
function readYaml(text: string): unknown {
  try {
    // yaml.v3 (the collector's writer) and svc's renderer both write YAML 1.2 core scalars.
    // Aliases stay bounded (the library's default): a collector's report is not trusted input.
    return parse(text, { uniqueKeys: false });
  } catch {
    return undefined;
  }
}

function isMap(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

const samePath = (path: Path, pattern: Path) => path.length === pattern.length && pattern.every((key, i) => key === "*" || key === path[i]);
const within = (path: Path, prefix: Path) => path.length >= prefix.length && prefix.every((key, i) => key === "*" || key === path[i]);

/** `service.pipelines.<id>.receivers|exporters`: a set, not a sequence. */
const isPipelineSet = (path: Path) => samePath(path, ["service", "pipelines", "*", "receivers"]) || samePath(path, ["service", "pipelines", "*", "exporters"]);

/**
 * Whether `effective` holds what `target` sets at `path`, recording each
 * difference in `out`; returns the effective value seen through the target's
 * keys, with equal parts as the target writes them, so a diff shows only what
 * differs.
 */
function project(target: unknown, effective: unknown, path: Path, out: Difference[]): unknown {
  if (SUPERVISOR_OWNED.some((owned) => within(path, owned))) return target;
  if (target === null || target === undefined) return target;

  if (isMap(target)) {
    if (effective === null && isZero(target)) return target;
    const map = isMap(effective) ? effective : pairsAsMap(effective);
    if (map === null) {
      out.push({ path, kind: "different" });
      return effective;
    }
    const value: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(target)) {
      const at = [...path, key];
      if (!Object.hasOwn(map, key)) {
        // A Go zero value under `omitempty` is not marshaled: the target leaving it empty is what runs.
        if (isZero(inner) || SUPERVISOR_OWNED.some((owned) => within(at, owned))) value[key] = inner;
        else out.push({ path: at, kind: "missing" });
        continue;
      }
      value[key] = project(inner, map[key], at, out);
    }
    return value;
  }

  if (Array.isArray(target)) {
    if (effective === null && target.length === 0) return target;
    if (!Array.isArray(effective)) {
      out.push({ path, kind: "different" });
      return effective;
    }
    if (samePath(path, ["service", "extensions"])) {
      // The supervisor appends its own (configMergeFunc): the target's must all be there.
      const have = new Set(effective.map(String));
      const missing = target.map(String).filter((id) => !have.has(id));
      if (missing.length > 0) out.push({ path, kind: "different" });
      return missing.length === 0 ? target : effective;
    }
    if (isPipelineSet(path)) {
      const want = new Set(target.map(String));
      const have = new Set(effective.map(String));
      const equal = want.size === have.size && [...want].every((id) => have.has(id));
      if (!equal) out.push({ path, kind: "different" });
      return equal ? target : [...effective].map(String).sort();
    }
    // In order, item by item; a difference anywhere in it is the list's.
    const inner: Difference[] = [];
    const value = effective.length === target.length ? target.map((item, i) => project(item, effective[i], [...path, String(i)], inner)) : effective;
    if (effective.length !== target.length || inner.length > 0) out.push({ path, kind: "different" });
    return effective.length === target.length && inner.length === 0 ? target : value;
  }

  if (scalarEqual(target, effective)) return target;
  out.push({ path, kind: "different" });
  return effective;
}

/** `[{name, value}, …]` (a marshaled `configopaque.MapList`) as the map it stands for; null for anything else. */
function pairsAsMap(value: unknown): Record<string, unknown> | null {
  if (!Array.isArray(value)) return null;
  const map: Record<string, unknown> = {};
  for (const item of value) {
    if (!isMap(item) || typeof item.name !== "string" || Object.keys(item).some((k) => k !== "name" && k !== "value")) return null;
    map[item.name] = item.value;
  }
  return map;
}

/** A Go zero value as YAML: null, "", 0, false, or an empty (or all-zero) map or list. */
function isZero(value: unknown): boolean {
  if (value === null || value === undefined || value === "" || value === 0 || value === false) return true;
  if (Array.isArray(value)) return value.length === 0;
  if (isMap(value)) return Object.values(value).every(isZero);
  return false;
}

function scalarEqual(target: unknown, effective: unknown): boolean {
  if (effective === REDACTED && !isMap(target) && !Array.isArray(target)) return true;
  if (isMap(effective) || Array.isArray(effective)) return false;
  if (effective === null || effective === undefined) return isZero(target);
  const want = String(target);
  const have = String(effective);
  if (want === have) return true;
  if (typeof target === "string" && expanded(target).test(have)) return true;
  const a = goDuration(want);
  const b = goDuration(have) ?? (typeof effective === "number" && Number.isInteger(effective) ? effective : null);
  if (a !== null && b !== null) return a === b;
  const x = Number(want);
  const y = Number(have);
  return want.trim() !== "" && have.trim() !== "" && Number.isFinite(x) && Number.isFinite(y) && x === y;
}

/**
 * What a target string becomes once the collector resolved it: each `${…}`
 * reference any text (its value is only known on the host), each `$$` one `$`.
 */
function expanded(text: string): RegExp {
  let pattern = "";
  let i = 0;
  while (i < text.length) {
    if (text.startsWith("$$", i)) {
      pattern += "\\$";
      i += 2;
    } else if (text.startsWith("${", i) && text.indexOf("}", i) > i) {
      pattern += "[\\s\\S]*";
      i = text.indexOf("}", i) + 1;
    } else {
      pattern += RegExp.escape(text[i]!);
      i += 1;
    }
  }
  return new RegExp(`^${pattern}$`);
}

const DURATION_UNITS: Record<string, number> = { ns: 1, us: 1e3, µs: 1e3, μs: 1e3, ms: 1e6, s: 1e9, m: 60e9, h: 3600e9 };
const DURATION = /^[+-]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/;

/** A Go `time.ParseDuration` string as nanoseconds (`1m0s`, `90s`, `1.5h`); null when it is not one. */
function goDuration(text: string): number | null {
  if (text === "0") return 0;
  if (!DURATION.test(text)) return null;
  const sign = text.startsWith("-") ? -1 : 1;
  let total = 0;
  for (const [, amount, unit] of text.matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g)) total += Number(amount) * DURATION_UNITS[unit!]!;
  return sign * Math.round(total);
}

/**
 * Pipelines the collector runs that the target does not name, other than the
 * supervisor's and the bootstrap's idle ones.
 */
function unexpectedPipelines(target: Record<string, unknown>, effective: Record<string, unknown>): [string, unknown][] {
  const want = pipelinesOf(target);
  const have = pipelinesOf(effective);
  return Object.entries(have).filter(([name, pipeline]) => !Object.hasOwn(want, name) && !supervisorPipeline(name, pipeline));
}

function pipelinesOf(config: Record<string, unknown>): Record<string, unknown> {
  const service = config.service;
  return isMap(service) && isMap(service.pipelines) ? service.pipelines : {};
}

function supervisorPipeline(name: string, pipeline: unknown): boolean {
  if (name === "metrics/own_metrics") return true;
  if (!isMap(pipeline)) return false;
  const ids = [pipeline.receivers, pipeline.exporters].flatMap((list) => (Array.isArray(list) ? list.map(String) : []));
  return ids.length > 0 && ids.every((id) => id.split("/")[0] === "nop");
}

function withPipelines(config: unknown, extra: [string, unknown][]): unknown {
  if (extra.length === 0 || !isMap(config)) return config;
  const service = isMap(config.service) ? config.service : {};
  const pipelines = isMap(service.pipelines) ? service.pipelines : {};
  return { ...config, service: { ...service, pipelines: { ...pipelines, ...Object.fromEntries(extra) } } };
}

/** One stable text per value: keys sorted, so reordering never shows. */
function yamlText(value: unknown): string {
  return stringify(value, { sortMapEntries: true, lineWidth: 0, aliasDuplicateObjects: false });
}

function describe(differences: readonly Difference[]): string {
  const words = { missing: "missing", different: "differs", unexpected: "not in the target" } as const;
  const named = differences.slice(0, REASON_PATHS).map((d) => `${d.path.join(".") || "the config"} ${words[d.kind]}`);
  const more = differences.length - named.length;
  return named.join("; ") + (more > 0 ? `; and ${more} more` : "");
}

function unifiedDiff(target: string, effective: string): string {
  return createTwoFilesPatch("target", "effective", target, effective, undefined, undefined, { context: 3 }).replace(/^=+\n/, "");
}

// ---------------------------------------------------------------- alloy

function alloyDrift(target: string, effective: string): Drift {
  const want = alloyText(target);
  const have = alloyText(effective);
  if (want === have) return { drifted: false, diff: null };
  return { drifted: true, diff: unifiedDiff(want, have), reason: "the config Alloy last loaded is not the target" };
}

/**
 * Alloy config text with what cannot change what runs taken out: line
 * endings, blank and whole-line `//` comment lines, and runs of whitespace
 * outside string literals (`"…"` with escapes, or raw `` `…` ``) made one
 * space; a string's content is kept exactly.
 */
function alloyText(text: string): string {
  const lines: string[] = [];
  for (const raw of text.replaceAll("\r\n", "\n").split("\n")) {
    const line = collapseOutsideStrings(raw).trim();
    if (line === "" || line.startsWith("//")) continue;
    lines.push(line);
  }
  return lines.join("\n") + "\n";
}

function collapseOutsideStrings(line: string): string {
  let out = "";
  let quote: '"' | "`" | null = null;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote !== null) {
      out += c;
      if (quote === '"' && c === "\\" && i + 1 < line.length) out += line[++i];
      else if (c === quote) quote = null;
    } else if (c === '"' || c === "`") {
      quote = c;
      out += c;
    } else if (c === " " || c === "\t") {
      if (!out.endsWith(" ")) out += " ";
    } else out += c;
  }
  return out;
}
