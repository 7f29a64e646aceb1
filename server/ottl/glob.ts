/**
 * The glob patterns of `replace_match` and `replace_all_matches`, which upstream
 * compiles with github.com/gobwas/glob when the statement is built
 * (pkg/ottl/ottlfuncs/func_replace_match.go @b049dee7; pkg/ottl/go.mod @59506098
 * pins gobwas/glob v0.2.3 = 1dc80ac1, its last release). A pattern Compile refuses
 * stops the collector at start, so it is refused here with the same reason.
 *
 * What v0.2.3 refuses (syntax/lexer/lexer.go fetchRange, syntax/ast/parser.go
 * parserRange; checked against the Go library itself): only `[...]` ranges can be
 * wrong. `{`, `}` and `,` never fail (an unclosed `{a` compiles), nor does a
 * trailing `\`. A range is `[`, an optional `!`, then either `lo-hi` and `]`, or
 * characters (`\` escapes one) up to `]`. Its lexer errors win over the parser's.
 * Its lexer also takes a NUL character for the end of input, silently dropping
 * the rest of the pattern: refused here, as no glob means that.
 */

export interface GlobProblem {
  /** Where in the pattern (UTF-16 units). */
  offset: number;
  reason: string;
}

/** Why gobwas/glob v0.2.3 Compile refuses a pattern, or undefined. */
export function globProblem(pattern: string): GlobProblem | undefined {
  const nul = pattern.indexOf("\0");
  if (nul >= 0) return { offset: nul, reason: "a NUL character would end the pattern there (gobwas/glob reads it as the end of input)" };
  const chars = [...pattern];
  const at: number[] = [];
  let units = 0;
  for (const c of chars) {
    at.push(units);
    units += c.length;
  }
  at.push(units);
  for (let i = 0; i < chars.length; i++) {
    if (chars[i] === "\\") i++;
    else if (chars[i] === "[") {
      const end = rangeEnd(chars, i + 1);
      if (typeof end !== "number") return { offset: at[Math.min(end.index, chars.length)]!, reason: end.reason };
      i = end;
    }
  }
  return undefined;
}

/** The index of the `]` closing the range whose body starts at `start`, or the problem. */
function rangeEnd(chars: string[], start: number): number | { index: number; reason: string } {
  const endOfInput = { index: chars.length, reason: "unexpected end of input: a '[' range is not closed with ']'" };
  let j = start;
  if (chars[j] === "!") j++;
  if (j >= chars.length) return endOfInput;
  if (chars[j + 1] === "-") {
    const lo = chars[j]!;
    const hi = chars[j + 2];
    if (hi === undefined || chars[j + 3] === undefined) return endOfInput;
    if (chars[j + 3] !== "]") return { index: j + 3, reason: "expected close range character: a range [a-z] holds one lo-hi pair" };
    if (hi.codePointAt(0)! < lo.codePointAt(0)!) return { index: j, reason: `hi character '${hi}' should be greater than lo '${lo}'` };
    return j + 3;
  }
  let k = j;
  let text = 0;
  while (k < chars.length && chars[k] !== "]") {
    if (chars[k] === "\\") k++;
    if (k < chars.length) text++;
    k++;
  }
  if (k >= chars.length) return endOfInput;
  if (text === 0) return { index: start - 1, reason: "could not parse range: a range needs characters or lo-hi" };
  return k;
}
