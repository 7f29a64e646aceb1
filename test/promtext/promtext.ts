/**
 * Prometheus' own text-format parser (github.com/prometheus/common/expfmt),
 * as Prometheus reads a scrape: runs test/peers/bin/promtext
 * (test/peers/promtext/main.go, built by scripts/peers.sh before the tests)
 * on one exposition per run. Without the binary it throws naming the build
 * command, so a test that needs it fails instead of skipping.
 */
import { peer } from "../peers/peers.ts";

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

/** Parses a text exposition as Prometheus does; throws with the parser's message when it refuses it. */
export function parsePromText(exposition: string): ParsedFamily[] {
  const result = Bun.spawnSync([peer("promtext")], { stdin: new TextEncoder().encode(exposition), stdout: "pipe", stderr: "pipe" });
  if (result.exitCode !== 0) throw new Error(`Prometheus' text parser refused the exposition: ${result.stderr.toString()}`);
  return JSON.parse(result.stdout.toString()) as ParsedFamily[];
}
