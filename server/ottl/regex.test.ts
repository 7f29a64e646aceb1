import { describe, expect, test } from "bun:test";
import { compileRe2, Re2Error, translateRe2 } from "./regex.ts";

const matches = (pattern: string, text: string) => compileRe2(pattern).test(text);

describe("RE2 meaning, in JavaScript", () => {
  const cases: [string, string, boolean][] = [
    // \s is ASCII [\t\n\f\r ]: no \v, no Unicode spaces.
    [String.raw`^\s$`, " ", true],
    [String.raw`^\s$`, "\v", false],
    [String.raw`^\s$`, "\u00a0", false],
    [String.raw`^\S$`, "\u00a0", true],
    [String.raw`^[\s]$`, "\u2003", false],
    // . is any code point but \n; (?s) adds \n.
    ["^.$", "\r", true],
    ["^.$", "\u2028", true],
    ["^.$", "\n", false],
    ["^.$", "😀", true],
    ["(?s)^.$", "\n", true],
    ["^(?s:.)(?-s:.)$", "\nx", true],
    ["^(?s:.)(?-s:.)$", "x\n", false],
    // ^ and $ are text ends; (?m) makes them line ends at \n only.
    ["a$", "a\n", false],
    ["(?m)a$", "a\nb", true],
    ["(?m)^b", "a\nb", true],
    ["(?m)^b", "a\rb", false],
    [String.raw`\Aab\z`, "ab", true],
    [String.raw`\Aab\z`, "ab\n", false],
    // Case folding is Unicode simple folding, scoped like Go's flags.
    ["(?i)k", "\u212a", true],
    ["(?i)straße", "STRASSE", false],
    ["(?i)a(?-i)b", "AB", false],
    ["(?i)a(?-i)b", "Ab", true],
    ["(?:(?i)a)b", "AB", false],
    ["(?:(?i)a)b", "Ab", true],
    ["x(?i:a)b", "xAb", true],
    ["a(?i)b|c", "C", true],
    // \b and \w are ASCII, even under (?i).
    ["(?i)\\bſ", "ſ", false],
    [String.raw`(?i)x\b`, "xſ", true],
    ["\\bé", "é", false],
    [String.raw`^\w+$`, "abc_09", true],
    [String.raw`^\w$`, "é", false],
    [String.raw`(?i)^\w$`, "\u212a", true],
    [String.raw`^\d$`, "٣", false],
    // Classes: POSIX names, ranges, escapes, negation (which includes \n).
    ["^[[:alpha:]]+$", "abcXYZ", true],
    ["^[[:^digit:]]$", "5", false],
    ["^[[:space:]]$", "\v", true],
    ["^[^a]$", "\n", true],
    ["^[]a]+$", "]a]", true],
    ["^[a-]+$", "-a", true],
    [String.raw`^[\d-z]+$`, "1-z", true],
    [String.raw`^[\p{Lu}\d]+$`, "AÉ9", true],
    [String.raw`^\pL+$`, "éa", true],
    [String.raw`^\PL$`, "é", false],
    [String.raw`^\p{^L}$`, "1", true],
    [String.raw`^[^\x{1F600}]$`, "😀", false],
    [String.raw`^\x{1F600}$`, "😀", true],
    ["(?i)^[k]$", "\u212a", true],
    ["(?i)^[^k]$", "\u212a", false],
    // Escapes and literal text.
    [String.raw`^\101\0\12$`, "A\0\n", true],
    [String.raw`^\x41\x{42}$`, "AB", true],
    [String.raw`^\Q.*+\E$`, ".*+", true],
    [String.raw`^\Q.*`, "ab", false],
    [String.raw`^\.\-\_\ $`, ".-_ ", true],
    [String.raw`^\a\f\t\n\r\v$`, "\x07\f\t\n\r\v", true],
    // Braces that are not a repeat count are literals; (?P<n>) is a group.
    ["^a{,3}$", "a{,3}", true],
    ["^a{01}$", "a{01}", true],
    ["^a{x$", "a{x", true],
    ["^a{2}$", "aa", true],
    ["^(?P<word>ab)+$", "abab", true],
    ["^(?<word>ab)$", "ab", true],
    ["", "anything", true],
    ["^$", "", true],
    ["a|", "b", true],
    ["^*a", "a", true],
    ["ab(?i)*", "a", true],
  ];
  for (const [pattern, text, expected] of cases) {
    test(`${pattern} on ${JSON.stringify(text)} is ${expected}`, () => {
      expect(matches(pattern, text)).toBe(expected);
    });
  }
});

describe("translation", () => {
  test("flags become the JS shape: a leading (?i) is the i flag, others are scoped groups", () => {
    expect(translateRe2("(?i)^/healthz$")).toEqual({ source: "^\\/healthz$", flags: "iu" });
    expect(translateRe2(String.raw`a\b(?i)b\bc`)).toEqual({ source: String.raw`a\b(?i:b)\b(?i:c)`, flags: "u" });
    expect(translateRe2(String.raw`(?i)x\by`).source).toBe(String.raw`x(?-i:\b)y`);
    expect(translateRe2("(?U)a*b*?").source).toBe("a*?b*");
    expect(translateRe2("x{2,3}?y{2,}z{0}").source).toBe("x{2,3}?y{2,}z{0}");
    expect(translateRe2(String.raw`\Qa.b\E+`).source).toBe(String.raw`a\.b+`);
  });

  test("a pattern is compiled once and reused", () => {
    expect(compileRe2("^once$")).toBe(compileRe2("^once$"));
  });
});

describe("what RE2 rejects, or JS would read differently, is an error at its offset", () => {
  const cases: [string, number, string][] = [
    ["ab(?=c)", 2, "lookahead"],
    ["(?!c)", 0, "lookahead"],
    ["(?<=a)b", 0, "lookbehind"],
    ["a(?<!a)", 1, "lookbehind"],
    ["(?>a)", 0, "atomic groups"],
    [String.raw`(a)\1`, 3, String.raw`backreferences (\1)`],
    [String.raw`(?P<n>a)\k<n>`, 8, "backreferences are not supported"],
    ["(?P<n>a)(?P=n)", 8, "backreferences"],
    [String.raw`a\Z`, 1, String.raw`invalid escape '\Z' (RE2 has \z only)`],
    [String.raw`\8`, 0, String.raw`invalid escape '\8'`],
    [String.raw`\e`, 0, String.raw`invalid escape '\e'`],
    [String.raw`\C`, 0, String.raw`\C (any byte)`],
    ["a\\", 1, "trailing backslash"],
    [String.raw`\x{110000}`, 0, "invalid \\x escape"],
    [String.raw`\xZ1`, 0, "invalid \\x escape"],
    [String.raw`[\b]`, 1, "\\b is not allowed in a class"],
    [String.raw`\p{Greek}`, 0, "unsupported Unicode class 'Greek'"],
    [String.raw`\p{C}`, 0, "\\p{C} is not supported"],
    ["(?i)[[:^alpha:]]", 5, "not supported under (?i)"],
    ["[[:foo:]]", 1, "unknown POSIX class [:foo:]"],
    ["[z-a]", 2, "invalid class range"],
    ["[abc", 0, "missing closing ']'"],
    ["(abc", 0, "missing closing ')'"],
    ["abc)", 3, "unexpected ')'"],
    ["*a", 0, "missing argument to repetition operator '*'"],
    ["a|*", 2, "missing argument"],
    ["(?i)+", 4, "missing argument"],
    ["{2}", 0, "missing argument"],
    ["a**", 2, "cannot follow another"],
    ["a*?+", 3, "cannot follow another"],
    ["a{2}{3}", 4, "cannot follow another"],
    ["a{1001}", 1, "invalid repeat count"],
    ["a{3,2}", 1, "invalid repeat count"],
    ["(a{100}){100}", 8, "multiply to more than 1000"],
    ["(?P<n>a)(?P<n>b)", 8, "duplicate group name 'n'"],
    ["(?P<1-x>a)", 0, "invalid group name"],
    ["(?P<n", 0, "invalid named group"],
    ["(?#comment)", 0, "invalid or unsupported Perl syntax"],
    ["(?i-)", 0, "invalid or unsupported Perl syntax"],
    ["(?x)", 0, "invalid or unsupported Perl syntax"],
    [`${"(".repeat(1001)}${")".repeat(1001)}`, 1000, "nest more than 1000 deep"],
  ];
  for (const [pattern, offset, reason] of cases) {
    test(pattern.slice(0, 40), () => {
      let error: unknown;
      try {
        compileRe2(pattern);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(Re2Error);
      expect((error as Re2Error).reason).toContain(reason);
      expect((error as Re2Error).offset).toBe(offset);
    });
  }
});
