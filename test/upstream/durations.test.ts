/**
 * The duration grammars against the real parsers: a Go program
 * (test/peers/durations, built by scripts/peers.sh before the tests) runs Go's
 * time.ParseDuration and Prometheus' model.ParseDuration over a generated
 * corpus, and server/catalog/durations.ts must agree on every string,
 * accepted or not. Without the binary the test fails naming the build command.
 */
import { expect, test } from "bun:test";
import fc from "fast-check";
import { parseGoDuration, parsePrometheusDuration } from "../../server/catalog/durations.ts";
import { peer } from "../peers/peers.ts";

const PIECES = [
  "0",
  "1",
  "5",
  "10",
  "30",
  "99",
  "1000000",
  "9223372036854775807",
  "2562047",
  ".",
  ".5",
  "5.",
  "1.5",
  "ns",
  "us",
  "\u00b5s",
  "\u03bcs",
  "ms",
  "s",
  "m",
  "h",
  "d",
  "w",
  "y",
  "-",
  "+",
  " ",
  "e",
];
const duration = fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 6 }).map((parts) => parts.join(""));

test("Go's time.ParseDuration and Prometheus' model.ParseDuration agree with ours on every string", () => {
  const binary = peer("durations");
  const corpus = [
    ...new Set([
      "",
      "0",
      "-0",
      "30s1m",
      "1h30m",
      "1d",
      "3w2d1h",
      "9223372036854775807ns",
      "9223372036854775808ns",
      ...fc.sample(duration, { numRuns: 20000, seed: 19 }),
    ]),
  ];
  const run = Bun.spawnSync([binary], { stdin: new TextEncoder().encode(corpus.map((t) => JSON.stringify(t)).join("\n") + "\n") });
  const answers = run.stdout.toString().trim().split("\n");
  expect(answers).toHaveLength(corpus.length);
  const disagreements = corpus.flatMap((text, i) => {
    const [go, prometheus] = answers[i]!.split(" ");
    const ours = parseGoDuration(text);
    // Go takes a fraction through float64; ours is exact, so they may differ by a nanosecond.
    const goAgrees = go === "null" ? ours === null : ours !== null && BigInt(go!) - ours <= 1n && ours - BigInt(go!) <= 1n;
    const promAgrees = String(parsePrometheusDuration(text)) === prometheus;
    return goAgrees && promAgrees ? [] : [`${JSON.stringify(text)}: go ${go} prometheus ${prometheus}`];
  });
  expect(disagreements).toEqual([]);
});
