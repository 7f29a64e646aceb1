/**
 * Prometheus' own text-format parser (github.com/prometheus/common/expfmt),
 * as Prometheus reads a scrape: builds test/promtext/main.go once per process
 * and parses one exposition per run. Needs Debian's golang-go and
 * golang-github-prometheus-common-dev (scripts/system-deps.sh installs them);
 * without them it throws saying so, so a test that needs it fails instead of skipping.
 */
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Where Debian's golang-github-prometheus-common-dev puts the source: a GOPATH. */
const GOPATH = "/usr/share/gocode";
const SOURCE = join(GOPATH, "src/github.com/prometheus/common/expfmt/text_parse.go");

/** NaN and the infinities come as the strings "NaN", "+Inf", "-Inf" (JSON has no such numbers). */
export interface ParsedMetric {
  labels: Record<string, string>;
  value?: number;
  buckets?: { le: number | "+Inf"; count: number }[];
  sum?: number;
  count?: number;
}

/** A family as the parser read it; type is client_model's name: COUNTER, GAUGE, HISTOGRAM, … */
export interface ParsedFamily {
  name: string;
  help: string;
  type: string;
  metrics: ParsedMetric[];
}

let binary: string | undefined;

function build(): string {
  const go = Bun.which("go");
  const missing = [go ? undefined : "golang-go (the go command)", existsSync(SOURCE) ? undefined : `golang-github-prometheus-common-dev (${SOURCE})`].filter(Boolean);
  if (missing.length > 0) {
    throw new Error(`The Prometheus text check needs ${missing.join(" and ")}: run scripts/system-deps.sh, or as root: apt-get install golang-go golang-github-prometheus-common-dev`);
  }
  const out = join(mkdtempSync(join(tmpdir(), "svc-promtext-")), "promtext");
  const env: Record<string, string> = { ...(process.env as Record<string, string>), GOPATH, GO111MODULE: "off", GOFLAGS: "", CGO_ENABLED: "0" };
  // Go needs a build cache; without HOME (some CI shells) it has nowhere to put one.
  if (!env.GOCACHE && !env.HOME && !env.XDG_CACHE_HOME) env.GOCACHE = join(tmpdir(), "svc-go-build-cache");
  const result = Bun.spawnSync([go!, "build", "-o", out, "."], { cwd: import.meta.dir, env, stderr: "pipe", stdout: "pipe" });
  if (result.exitCode !== 0) throw new Error(`go build of test/promtext failed:\n${result.stderr.toString()}`);
  return out;
}

/** Parses a text exposition as Prometheus does; throws with the parser's message when it refuses it. */
export function parsePromText(exposition: string): ParsedFamily[] {
  binary ??= build();
  const result = Bun.spawnSync([binary], { stdin: new TextEncoder().encode(exposition), stdout: "pipe", stderr: "pipe" });
  if (result.exitCode !== 0) throw new Error(`Prometheus' text parser refused the exposition: ${result.stderr.toString()}`);
  return JSON.parse(result.stdout.toString()) as ParsedFamily[];
}
