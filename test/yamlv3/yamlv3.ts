/**
 * Go's gopkg.in/yaml.v3, as the collector decodes its config: builds
 * test/yamlv3/main.go once per process and decodes a batch of documents in
 * one run. Needs Debian's golang-go and golang-gopkg-yaml.v3-dev
 * (scripts/system-deps.sh installs them); without them it throws saying so,
 * so a test that needs it fails instead of skipping.
 */
import { existsSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Where Debian's golang-gopkg-yaml.v3-dev puts the source: a GOPATH. */
const GOPATH = "/usr/share/gocode";
const SOURCE = join(GOPATH, "src/gopkg.in/yaml.v3/yaml.go");

/** A decoded value: its Go type (`string`, `int`, `float64`, `bool`, `nil`, `time.Time`, `map[string]interface {}`, …) and value. */
export interface GoValue {
  type: string;
  value: string | boolean | null | GoValue[] | { key: GoValue; value: GoValue }[];
}

export type Decoded = { value: GoValue; error?: undefined } | { error: string; value?: undefined };

let binary: string | undefined;

function build(): string {
  const go = Bun.which("go");
  const missing = [go ? undefined : "golang-go (the go command)", existsSync(SOURCE) ? undefined : `golang-gopkg-yaml.v3-dev (${SOURCE})`].filter(Boolean);
  if (missing.length > 0) {
    throw new Error(`The yaml.v3 check needs ${missing.join(" and ")}: run scripts/system-deps.sh, or as root: apt-get install golang-go golang-gopkg-yaml.v3-dev`);
  }
  const out = join(mkdtempSync(join(tmpdir(), "svc-yamlv3-")), "yamlv3");
  const env: Record<string, string> = { ...(process.env as Record<string, string>), GOPATH, GO111MODULE: "off", GOFLAGS: "", CGO_ENABLED: "0" };
  // Go needs a build cache; without HOME (some CI shells) it has nowhere to put one.
  if (!env.GOCACHE && !env.HOME && !env.XDG_CACHE_HOME) env.GOCACHE = join(tmpdir(), "svc-go-build-cache");
  const result = Bun.spawnSync([go!, "build", "-o", out, "."], { cwd: import.meta.dir, env, stderr: "pipe", stdout: "pipe" });
  if (result.exitCode !== 0) throw new Error(`go build of test/yamlv3 failed:\n${result.stderr.toString()}`);
  return out;
}

/** Decodes every document with yaml.Unmarshal into `any`, in one process. */
export function decodeYamlV3(documents: readonly string[]): Decoded[] {
  binary ??= build();
  const result = Bun.spawnSync([binary], { stdin: new TextEncoder().encode(JSON.stringify(documents)), stdout: "pipe", stderr: "pipe" });
  if (result.exitCode !== 0) throw new Error(`test/yamlv3 failed: ${result.stderr.toString()}`);
  return JSON.parse(result.stdout.toString()) as Decoded[];
}

