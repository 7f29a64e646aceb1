/**
 * The matcher library against the cases of Alertmanager's own tests
 * (github.com/prometheus/alertmanager@68fb2d5759b3a92c0bb2a1a13d4ef7ff5b06256d,
 * matcher/parse/parse_test.go TestMatchers and TestMatcher, rewritten here as data),
 * our 1-based error columns, RE2's refusals, the matching rules, and a
 * parse → print → parse round trip.
 *
 * Checked once by hand against upstream itself (nothing of it kept here): Alertmanager's
 * matcher/parse and pkg/labels/matcher.go at that revision, built with Debian's Go 1.19
 * (two stand-ins for slices.Contains and strings.ContainsFunc), parsed 16,364 generated
 * strings; accept/refuse, the parsed name/operator/value and each matcher's verdict on 14
 * sample values agreed on all but `(?<name>…)`, which Go's regexp accepts only from Go 1.22
 * on (as re2js does), and our column was upstream's start column + 1 wherever upstream gives one.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { formatMatchers, Matcher, MatcherListError, MatcherSyntaxError, matches, parseMatcher, parseMatcherList, parseMatchers } from "./matchers.ts";

type Triple = [name: string, op: string, value: string];
const triples = (ms: readonly Matcher[]): Triple[] => ms.map((m) => [m.name, m.op, m.value]);

/** parse_test.go TestMatchers: inputs upstream accepts, and what they parse to. */
const ACCEPTED: [string, Triple[]][] = [
  ["", []],
  ["{}", []],
  ["{foo=bar}", [["foo", "=", "bar"]]],
  ["{foo=bar,}", [["foo", "=", "bar"]]],
  ["{foo!=bar}", [["foo", "!=", "bar"]]],
  ["{foo=~[a-z]+}", [["foo", "=~", "[a-z]+"]]],
  ["{foo!~[a-z]+}", [["foo", "!~", "[a-z]+"]]],
  ["{foo=🙂}", [["foo", "=", "🙂"]]],
  ["{foo=🙂bar}", [["foo", "=", "🙂bar"]]],
  ["foo=bar", [["foo", "=", "bar"]]],
  ["foo=bar,", [["foo", "=", "bar"]]],
  ["foo!=bar", [["foo", "!=", "bar"]]],
  ["foo=~[a-z]+", [["foo", "=~", "[a-z]+"]]],
  ["foo!~[a-z]+", [["foo", "!~", "[a-z]+"]]],
  ['{"foo"="bar"}', [["foo", "=", "bar"]]],
  ['{"foo"="bar",}', [["foo", "=", "bar"]]],
  ['{"foo"!="bar"}', [["foo", "!=", "bar"]]],
  ['{"foo"=~"[a-z]+"}', [["foo", "=~", "[a-z]+"]]],
  ['{"foo"=~"\\\\d+"}', [["foo", "=~", "\\d+"]]],
  ['{"foo"!~"[a-z]+"}', [["foo", "!~", "[a-z]+"]]],
  ['{"foo"="🙂"}', [["foo", "=", "🙂"]]],
  ['{"foo"="\\xf0\\x9f\\x99\\x82"}', [["foo", "=", "🙂"]]],
  ['{"foo"="\\U0001f642"}', [["foo", "=", "🙂"]]],
  ['{"foo"="🙂bar"}', [["foo", "=", "🙂bar"]]],
  ['{"foo"="bar\\n"}', [["foo", "=", "bar\n"]]],
  ['{"foo"="bar\\t"}', [["foo", "=", "bar\t"]]],
  ['{"foo"="\\"bar\\""}', [["foo", "=", '"bar"']]],
  ['{"foo"="bar\\\\"}', [["foo", "=", "bar\\"]]],
  ['"foo"="bar"', [["foo", "=", "bar"]]],
  ['"foo"="bar",', [["foo", "=", "bar"]]],
  [
    "{foo=bar,bar!=baz}",
    [
      ["foo", "=", "bar"],
      ["bar", "!=", "baz"],
    ],
  ],
  [
    '{foo="bar",bar!="baz"}',
    [
      ["foo", "=", "bar"],
      ["bar", "!=", "baz"],
    ],
  ],
  [
    "foo=bar,bar!=baz",
    [
      ["foo", "=", "bar"],
      ["bar", "!=", "baz"],
    ],
  ],
  [
    'foo="bar",bar!="baz"',
    [
      ["foo", "=", "bar"],
      ["bar", "!=", "baz"],
    ],
  ],
  // Ours, from the lexer's rules: spaces between tokens, Go's other escapes, quoted reserved runes.
  [
    ' { env = prod ,\tregion =~ "us-.*" } ',
    [
      ["env", "=", "prod"],
      ["region", "=~", "us-.*"],
    ],
  ],
  ["env=prod\u3000", [["env", "=", "prod"]]],
  ['a="\\a\\b\\f\\v\\r\\101\\u00e9"', [["a", "=", "\x07\b\f\v\rAé"]]],
  ['"a b{}"="x,y=z!~\'`"', [["a b{}", "=", "x,y=z!~'`"]]],
  ['""=""', [["", "=", ""]]],
  ['a=""', [["a", "=", ""]]],
  ["a.b/c:d=1.2.3-rc/4", [["a.b/c:d", "=", "1.2.3-rc/4"]]],
];

/** parse_test.go TestMatchers' refusals, with our column (upstream's start column + 1, or the end of input). */
const REFUSED: [string, number, RegExp][] = [
  [",", 1, /unexpected ","; expected a label name/],
  ["{,}", 2, /unexpected ","; expected a label name/],
  ["{", 2, /end of input; expected a closing brace/],
  ["}", 1, /"}" without an opening brace/],
  ["foo=bar}", 8, /"}" without an opening brace/],
  ["{foo=bar", 9, /end of input; expected a closing brace/],
  ['{foo=:"bar"}', 7, /unexpected "\\"bar\\""; expected a comma or a closing brace/],
  ['{foo="bar\\w"}', 6, /invalid escape \\w/],
  ['{"foo"=~"\\d+"}', 9, /invalid escape \\d/],
  ["{foo=bar\\n}", 9, /unexpected "\\\\"/],
  ['{"foo"="\\xf0\\x9f"}', 8, /valid UTF-8/],
  // Ours.
  ["env", 4, /end of input; expected an operator/],
  ["env=", 5, /end of input; expected a value/],
  ["env==prod", 5, /unexpected "="; expected a value/],
  ["env=~~x", 6, /unexpected "~"/],
  ["env!prod", 4, /"!" must be followed by "=" or "~"/],
  ["env~=prod", 4, /unexpected "~"/],
  ["env='prod'", 5, /unexpected "'"/],
  ['env="prod', 5, /missing the closing '"'/],
  ['env="a\nb"', 5, /newline/],
  ['env="\\\'"', 5, /invalid escape \\'/],
  ['env="\\ud800"', 5, /not a valid code point/],
  ['env="\\400"', 5, /invalid escape \\400/],
  ['env="\\x4"', 5, /invalid escape \\x4/],
  ["{a=b}c", 6, /unexpected "c"; expected the end/],
  ["a=b c=d", 5, /unexpected "c"; expected a comma$/],
  ["a=b,,", 5, /expected a matcher after the comma/],
  ["🙂=🙂 🙂", 5, /unexpected "🙂"/],
  ["x=\ud800", 3, /lone UTF-16 surrogate/],
];

describe("the grammar of Alertmanager's parse_test.go", () => {
  for (const [input, expected] of ACCEPTED) {
    test(`accepts ${JSON.stringify(input)}`, () => {
      expect(triples(parseMatchers(input))).toEqual(expected);
    });
  }
  for (const [input, column, reason] of REFUSED) {
    test(`refuses ${JSON.stringify(input)} at column ${column}`, () => {
      let error: unknown;
      try {
        parseMatchers(input);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(MatcherSyntaxError);
      const e = error as MatcherSyntaxError;
      expect({ column: e.column, input: e.input }).toEqual({ column, input });
      expect(e.reason).toMatch(reason);
      expect(e.message).toContain(`column ${column}:`);
    });
  }
});

describe("one matcher (parse_test.go TestMatcher)", () => {
  test("takes the same forms, braces and a trailing comma included", () => {
    for (const input of ["{foo=bar}", "{foo=bar,}", "foo=bar", "foo=bar,", '"foo"="bar"', '{"foo"="\\U0001f642"}']) {
      const m = parseMatcher(input);
      expect(m.op).toBe("=");
    }
    expect(triples([parseMatcher('region=~"us-.*"')])).toEqual([["region", "=~", "us-.*"]]);
  });
  test("refuses none or two, naming where the second starts", () => {
    expect(() => parseMatcher("")).toThrow(/column 1: no matcher/);
    expect(() => parseMatcher("{}")).toThrow(/column 1: no matcher/);
    expect(() => parseMatcher("foo=bar,bar=baz")).toThrow(/column 9: expected one matcher, found 2/);
    expect(() => parseMatcher('foo="\\xf0\\x9f"')).toThrow(/column 5: .*valid UTF-8/);
  });
});

describe("a list, as a request carries it", () => {
  test("parses every matcher", () => {
    expect(triples(parseMatcherList(["env=prod", 'region=~"us-.*"', "team!=test"]))).toEqual([
      ["env", "=", "prod"],
      ["region", "=~", "us-.*"],
      ["team", "!=", "test"],
    ]);
  });
  test("names each matcher that does not parse by its path, with the column", () => {
    let error: unknown;
    try {
      parseMatcherList(["env=prod", "team!=test", 'env=:"x"', "ok=1", "a=~(b"]);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(MatcherListError);
    const details = (error as MatcherListError).details;
    expect(details.map((d) => d.path)).toEqual(["matchers[2]", "matchers[4]"]);
    expect(details[0]!.message).toBe(`"env=:\\"x\\"", column 6: unexpected "\\"x\\""; expected a comma`);
    expect(details[1]!.message).toMatch(/^"a=~\(b", column 4: invalid regular expression \(RE2 syntax\): .*missing closing \)/);
  });
  test("takes another path prefix", () => {
    expect(() => parseMatcherList(["x"], "body.matchers")).toThrow(/^body\.matchers\[0\]: "x", column 2:/);
  });
});

describe("RE2, not JavaScript's RegExp", () => {
  const refused: [string, RegExp][] = [
    ["(a)\\1", /invalid escape/],
    ["(?=a)a", /Perl syntax/],
    ["(?!a).*", /Perl syntax/],
    ["(?<=a)b", /invalid named capture/],
    ["a++", /invalid nested repetition operator/],
    ["a{1001}", /invalid repeat count/],
    ["[z-a]", /invalid character class range/],
    ["\\", /missing closing \)/], // the \ escapes the anchors' ")"
  ];
  for (const [re, reason] of refused) {
    test(`refuses =~${JSON.stringify(re)}`, () => {
      expect(() => parseMatcher(`x=~${JSON.stringify(re)}`)).toThrow(reason);
      expect(() => parseMatcher(`x!~${JSON.stringify(re)}`)).toThrow(/column 4: invalid regular expression/);
    });
  }
  test("accepts RE2's own syntax: classes, Unicode groups, flags, named groups", () => {
    const m = (re: string) => parseMatcher(`x=~${JSON.stringify(re)}`);
    expect(m("\\pL+").matches("été")).toBe(true);
    expect(m("(?i)prod").matches("PROD")).toBe(true);
    expect(m("(?P<n>a)b").matches("ab")).toBe(true);
    expect(m("[[:digit:]]{2,3}").matches("123")).toBe(true);
    expect(m("\\Qa.b\\E").matches("a.b")).toBe(true);
    expect(m("\\Qa.b\\E").matches("axb")).toBe(false);
  });
  test("a pattern that backtracks catastrophically in RegExp runs in linear time", () => {
    // A backtracking engine takes 2^50,000 steps here (it would never finish); RE2 answers at once.
    // How fast is not this test's to say: it asserts the answer, and a backtracking matcher fails it by never returning.
    const m = parseMatcher('x=~"(a+)+b"');
    expect(m.matches("a".repeat(50_000))).toBe(false);
    expect(m.matches(`${"a".repeat(50_000)}b`)).toBe(true);
  });
});

describe("matching", () => {
  const collector = { env: "prod", region: "us-east-1", "host.name": "web-01", empty: "" };
  const holds = (list: string[], attrs: Record<string, string> = collector) => matches(parseMatcherList(list), attrs);

  test("every matcher must hold", () => {
    expect(holds(["env=prod", 'region=~"us-.*"'])).toBe(true);
    expect(holds(["env=prod", "region=~eu-.*"])).toBe(false);
    expect(holds([])).toBe(true);
  });
  test("regular expressions are fully anchored, as Alertmanager anchors them", () => {
    expect(holds(["region=~us"])).toBe(false);
    expect(holds(["region=~east"])).toBe(false);
    expect(holds(["region=~.*east.*"])).toBe(true);
    expect(holds(["region!~us"])).toBe(true);
    expect(holds(["env=~prod|staging"])).toBe(true);
    expect(holds(["env=~prod|staging"], { env: "preprod" })).toBe(false);
    expect(holds(["env=~prod|staging"], { env: "production" })).toBe(false);
  });
  test("the anchors wrap the pattern by concatenation, as upstream's do: a)|(b anchors only one end of each side", () => {
    // ^(?:a)|(b)$ — Go's regexp reads it so; so do we.
    expect(holds(['x=~"a)|(b"'], { x: "a-anything" })).toBe(true);
    expect(holds(['x=~"a)|(b"'], { x: "anything-b" })).toBe(true);
    expect(holds(['x=~"a)|(b"'], { x: "c" })).toBe(false);
  });
  test('an absent attribute reads as ""', () => {
    expect(holds(["team!=test"])).toBe(true);
    expect(holds(["team=test"])).toBe(false);
    expect(holds(['team=""'])).toBe(true);
    expect(holds(["team=~.*"])).toBe(true);
    expect(holds(["team=~.+"])).toBe(false);
    expect(holds(["team!~.+"])).toBe(true);
    expect(holds(['empty=""', "empty!~.+"])).toBe(true);
  });
  test("names of Object.prototype are attributes like any other", () => {
    expect(holds(['constructor=""', "toString!~.+", '__proto__=""'])).toBe(true);
    expect(holds(["constructor=x"], { constructor: "x" })).toBe(true);
  });
  test("= and != compare exactly: case, spaces and Unicode forms differ", () => {
    expect(holds(["env=Prod"])).toBe(false);
    expect(holds(['host.name="web-01"'])).toBe(true);
    expect(holds(['x="é"'], { x: "e\u0301" })).toBe(false);
  });
  test(". matches one code point and not a newline (RE2's default flags)", () => {
    expect(holds(["x=~."], { x: "🙂" })).toBe(true);
    expect(holds(["x=~.."], { x: "🙂" })).toBe(false);
    expect(holds(["x=~.*"], { x: "a\nb" })).toBe(false);
    expect(holds(['x=~"(?s).*"'], { x: "a\nb" })).toBe(true);
  });
});

describe("printing", () => {
  test("prints as Alertmanager's Matcher.String does", () => {
    expect(String(parseMatcher("env=prod"))).toBe('env="prod"');
    expect(String(parseMatcher('"a b"!~"x\\"y\\\\\\n"'))).toBe('"a b"!~"x\\"y\\\\\\n"');
    expect(String(parseMatcher('""=x'))).toBe('""="x"');
    expect(formatMatchers(parseMatchers("a=b,c=~d"))).toBe('{a="b",c=~"d"}');
  });

  const text = fc.string({ unit: "grapheme", maxLength: 12 });
  const regex = fc.constantFrom("", ".*", "a|b", "[a-z]+", "\\d{2,4}", "(?i)x", "us-.*", "\\pL", "a)|(b", "\\\\", '"');
  const matcher = fc.oneof(fc.tuple(text, fc.constantFrom("=", "!="), text), fc.tuple(text, fc.constantFrom("=~", "!~"), regex));

  test("parse → print → parse round-trips (property)", () => {
    fc.assert(
      fc.property(fc.array(matcher, { maxLength: 4 }), (list) => {
        const built = list.map(([n, op, v]) => new Matcher(n, op as Matcher["op"], v));
        const once = parseMatchers(formatMatchers(built));
        expect(triples(once)).toEqual(triples(built));
        for (const m of built) expect(triples([parseMatcher(String(m))])).toEqual(triples([m]));
        expect(formatMatchers(parseMatchers(formatMatchers(once)))).toBe(formatMatchers(once));
      }),
      { numRuns: 500 },
    );
  });
});
