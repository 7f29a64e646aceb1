/**
 * The duration grammars of the programs that read our durations, so a value
 * we accept is one they parse:
 *
 * - `go`: Go's `time.ParseDuration` (golang/go src/time/format.go), which
 *   the collector's confmap and Alloy's syntax use for every `time.Duration`:
 *   optional sign, then one or more decimal numbers (fractions allowed) each
 *   with a unit of ns, us, µs, μs, ms, s, m, h, in any order; `0` alone needs
 *   no unit; the total must fit int64 nanoseconds.
 * - `prometheus`: prometheus/common `model.ParseDuration` (model/time.go,
 *   v0.70.1), which Prometheus' own config (the collector's prometheus
 *   receiver) uses: integers only, units y w d h m s ms from largest to
 *   smallest, each at most once; `0` alone needs no unit; no sign; the total
 *   must fit int64 nanoseconds.
 *
 * Both return nanoseconds, or null when the text does not parse.
 */

export const DURATION_GRAMMARS = ["go", "prometheus"] as const;
export type DurationGrammar = (typeof DURATION_GRAMMARS)[number];

const INT64_MAX = (1n << 63n) - 1n;
const NS = 1n;
const US = 1000n * NS;
const MS = 1000n * US;
const S = 1000n * MS;
const M = 60n * S;
const H = 60n * M;
const D = 24n * H;

const GO_UNITS: ReadonlyMap<string, bigint> = new Map([
  ["ns", NS],
  ["us", US],
  ["\u00b5s", US],
  ["\u03bcs", US],
  ["ms", MS],
  ["s", S],
  ["m", M],
  ["h", H],
]);

/** Units in the only order Prometheus accepts them, largest first. */
const PROMETHEUS_UNITS: readonly [string, bigint][] = [
  ["y", 365n * D],
  ["w", 7n * D],
  ["d", D],
  ["h", H],
  ["m", M],
  ["s", S],
  ["ms", MS],
];

const isDigit = (c: string | undefined) => c !== undefined && c >= "0" && c <= "9";

/** Go's `time.ParseDuration`: nanoseconds (may be negative), or null. */
export function parseGoDuration(text: string): bigint | null {
  let s = text;
  let negative = false;
  if (s[0] === "-" || s[0] === "+") {
    negative = s[0] === "-";
    s = s.slice(1);
  }
  if (s === "0") return 0n;
  if (s === "") return null;
  let total = 0n;
  while (s !== "") {
    if (!(isDigit(s[0]) || s[0] === ".")) return null;
    let i = 0;
    while (isDigit(s[i])) i++;
    const whole = s.slice(0, i);
    let fraction = "";
    if (s[i] === ".") {
      const start = ++i;
      while (isDigit(s[i])) i++;
      fraction = s.slice(start, i);
    }
    if (whole === "" && fraction === "") return null;
    s = s.slice(i);
    let u = 0;
    while (u < s.length && s[u] !== "." && !isDigit(s[u])) u++;
    const unit = GO_UNITS.get(s.slice(0, u));
    if (unit === undefined) return null;
    s = s.slice(u);
    // Go truncates the fraction's nanoseconds toward zero.
    const scale = 10n ** BigInt(fraction.length);
    const value = BigInt(whole === "" ? "0" : whole) * unit + (BigInt(fraction === "" ? "0" : fraction) * unit) / scale;
    total += value;
    if (total > INT64_MAX + (negative ? 1n : 0n)) return null;
  }
  return negative ? -total : total;
}

/** Prometheus' `model.ParseDuration`: nanoseconds, or null. */
export function parsePrometheusDuration(text: string): bigint | null {
  if (text === "0") return 0n;
  if (text === "") return null;
  let s = text;
  let total = 0n;
  let lastUnit = -1;
  while (s !== "") {
    let i = 0;
    while (isDigit(s[i])) i++;
    if (i === 0) return null;
    const value = BigInt(s.slice(0, i));
    s = s.slice(i);
    let u = 0;
    while (u < s.length && !isDigit(s[u])) u++;
    const position = PROMETHEUS_UNITS.findIndex(([name]) => name === s.slice(0, u));
    if (position < 0 || position <= lastUnit) return null;
    lastUnit = position;
    s = s.slice(u);
    total += value * PROMETHEUS_UNITS[position]![1];
    if (total > INT64_MAX) return null;
  }
  return total;
}

const PARSERS: Record<DurationGrammar, (text: string) => bigint | null> = {
  go: parseGoDuration,
  prometheus: parsePrometheusDuration,
};

/** Nanoseconds when every grammar parses `text` to the same value, else null. */
export function parseDuration(text: string, grammars: readonly DurationGrammar[]): bigint | null {
  let value: bigint | null = null;
  for (const grammar of grammars) {
    const parsed = PARSERS[grammar](text);
    if (parsed === null || (value !== null && parsed !== value)) return null;
    value = parsed;
  }
  return value;
}
