/**
 * Go's gopkg.in/yaml.v3, as the collector decodes its config: runs
 * test/peers/bin/yamlv3 (test/peers/yamlv3/main.go, built by
 * scripts/peers.sh before the tests) over a batch of documents in one run.
 * Without the binary it throws naming the build command, so a test that
 * needs it fails instead of skipping.
 */
import { peer } from "../peers/peers.ts";

/** A decoded value: its Go type (`string`, `int`, `float64`, `bool`, `nil`, `time.Time`, `map[string]interface {}`, …) and value. */
export interface GoValue {
  type: string;
  value: string | boolean | null | GoValue[] | { key: GoValue; value: GoValue }[];
}

export type Decoded = { value: GoValue; error?: undefined } | { error: string; value?: undefined };

/** Decodes every document with yaml.Unmarshal into `any`, in one process. */
export function decodeYamlV3(documents: readonly string[]): Decoded[] {
  const result = Bun.spawnSync([peer("yamlv3")], { stdin: new TextEncoder().encode(JSON.stringify(documents)), stdout: "pipe", stderr: "pipe" });
  if (result.exitCode !== 0) throw new Error(`test/yamlv3 failed: ${result.stderr.toString()}`);
  return JSON.parse(result.stdout.toString()) as Decoded[];
}
