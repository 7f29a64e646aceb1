/**
 * Splits condition text into tokens the way the collector's OTTL lexer does,
 * including its quirks that matter for round-tripping: numbers carry their
 * sign, floats need digits after the point, strings take Go escapes.
 * A lexing problem becomes an `error` token so the parser reports the
 * leftmost problem, lexical or not.
 */

export type Token =
  | { kind: "ident"; start: number; text: string }
  | { kind: "int"; start: number; text: string; value: bigint }
  | { kind: "float"; start: number; text: string; value: number }
  | { kind: "string"; start: number; text: string; value: string }
  | { kind: "op" | "punct"; start: number; text: string }
  | { kind: "eof"; start: number; text: "" }
  | { kind: "error"; start: number; text: string; reason: string };

const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);

const isDigit = (c: string | undefined) => c !== undefined && c >= "0" && c <= "9";
const isLetter = (c: string | undefined) => c !== undefined && ((c >= "a" && c <= "z") || (c >= "A" && c <= "Z"));
const isWord = (c: string | undefined) => isLetter(c) || isDigit(c) || c === "_";
/** Go's \s, which is what the collector's lexer skips. */
const isSpace = (c: string | undefined) => c === " " || c === "\t" || c === "\n" || c === "\r" || c === "\f";

const SIMPLE_ESCAPES: Record<string, string> = {
  a: "\x07",
  b: "\b",
  f: "\f",
  n: "\n",
  r: "\r",
  t: "\t",
  v: "\v",
  "\\": "\\",
  '"': '"',
};

const MISUSED: Record<string, string> = {
  "=": "'=' is not an operator; compare with '=='",
  "!": "'!' is not an operator; negate with 'not'",
  "&": "'&' is not an operator; use 'and'",
  "|": "'|' is not an operator; use 'or'",
  "+": "arithmetic is not supported",
  "-": "arithmetic is not supported",
  "*": "arithmetic is not supported",
  "/": "arithmetic is not supported",
  "'": "strings are written in double quotes",
  "{": "map literals are not supported",
};

export function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const fail = (start: number, reason: string): Token[] => {
    tokens.push({ kind: "error", start, text: source.slice(start, start + 1), reason });
    return tokens;
  };
  while (true) {
    while (isSpace(source[i])) i++;
    const start = i;
    const c = source[i];
    if (c === undefined) {
      tokens.push({ kind: "eof", start, text: "" });
      return tokens;
    }
    if (c === '"') {
      const token = lexString(source, start);
      if (token.kind === "error") return fail(token.start, token.reason);
      tokens.push(token);
      i = start + token.text.length;
      continue;
    }
    if (c === "0" && (source[i + 1] === "x" || source[i + 1] === "X")) return fail(start, "byte literals (0x...) are not supported");
    const signed = (c === "+" || c === "-") && (isDigit(source[i + 1]) || (source[i + 1] === "." && isDigit(source[i + 2])));
    if (isDigit(c) || signed || (c === "." && isDigit(source[i + 1]))) {
      if (signed) i++;
      while (isDigit(source[i])) i++;
      let float = false;
      if (source[i] === "." && isDigit(source[i + 1])) {
        float = true;
        i++;
        while (isDigit(source[i])) i++;
        const e = source[i];
        const sign = source[i + 1] === "+" || source[i + 1] === "-" ? 1 : 0;
        if ((e === "e" || e === "E") && isDigit(source[i + 1 + sign])) {
          i += 1 + sign;
          while (isDigit(source[i])) i++;
        }
      }
      const text = source.slice(start, i);
      // The collector's `\band\b` does not match right after a digit: `1and` is not `1 and`.
      if (isLetter(source[i]) || source[i] === "_") return fail(i, `a number must be followed by a space or an operator, not '${source[i]}'`);
      if (float) {
        const value = Number(text);
        if (!Number.isFinite(value)) return fail(start, `the number ${text} is out of range for a double`);
        tokens.push({ kind: "float", start, text, value });
      } else {
        const value = BigInt(text);
        if (value > INT64_MAX || value < INT64_MIN) return fail(start, `the integer ${text} is out of range for int64`);
        tokens.push({ kind: "int", start, text, value });
      }
      continue;
    }
    if (isLetter(c)) {
      while (isWord(source[i])) i++;
      tokens.push({ kind: "ident", start, text: source.slice(start, i) });
      continue;
    }
    const two = source.slice(i, i + 2);
    if (two === "==" || two === "!=" || two === "<=" || two === ">=") {
      tokens.push({ kind: "op", start, text: two });
      i += 2;
      continue;
    }
    if (c === "<" || c === ">") {
      tokens.push({ kind: "op", start, text: c });
      i++;
      continue;
    }
    if (c === "(" || c === ")" || c === "[" || c === "]" || c === "," || c === ".") {
      tokens.push({ kind: "punct", start, text: c });
      i++;
      continue;
    }
    const misuse = MISUSED[c];
    if (misuse) return fail(start, misuse);
    const code = c.codePointAt(0)!;
    const shown = code < 0x20 || code === 0x7f ? `U+${code.toString(16).toUpperCase().padStart(4, "0")}` : `'${String.fromCodePoint(source.codePointAt(i)!)}'`;
    return fail(start, `unexpected character ${shown}`);
  }
}

type StringResult = Extract<Token, { kind: "string" }> | { kind: "error"; start: number; reason: string };

/** The escape at `i` (a backslash): what it decodes to and where the next character starts. */
function decodeEscape(source: string, i: number): { decoded: string; next: number } | { reason: string } {
  const e = source[i + 1];
  if (e !== undefined && e in SIMPLE_ESCAPES) return { decoded: SIMPLE_ESCAPES[e]!, next: i + 2 };
  if (e === "x" || e === "u" || e === "U") {
    const width = e === "x" ? 2 : e === "u" ? 4 : 8;
    const hex = source.slice(i + 2, i + 2 + width);
    if (hex.length !== width || !/^[0-9a-fA-F]+$/.test(hex)) return { reason: `'\\${e}' takes exactly ${width} hex digits` };
    const code = parseInt(hex, 16);
    if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return { reason: `'\\${e}${hex}' is not a valid Unicode code point` };
    return { decoded: String.fromCodePoint(code), next: i + 2 + width };
  }
  if (e !== undefined && e >= "0" && e <= "7") {
    const oct = source.slice(i + 1, i + 4);
    if (!/^[0-7]{3}$/.test(oct) || parseInt(oct, 8) > 255) return { reason: "an octal escape takes exactly three digits, at most \\377" };
    return { decoded: String.fromCodePoint(parseInt(oct, 8)), next: i + 4 };
  }
  const shown = e === undefined ? "\\" : `\\${String.fromCodePoint(source.codePointAt(i + 1)!)}`;
  return { reason: `'${shown}' is not a valid escape in a string` };
}

function lexString(source: string, start: number): StringResult {
  let value = "";
  let i = start + 1;
  let run = i;
  let endsWithEscapedBackslash = false;
  while (true) {
    const c = source.charCodeAt(i);
    if (Number.isNaN(c)) return { kind: "error", start, reason: "the string is not closed" };
    if (c === 0x22) break;
    if (c !== 0x5c) {
      i++;
      continue;
    }
    const sequence = decodeEscape(source, i);
    if ("reason" in sequence) return { kind: "error", start: i, reason: sequence.reason };
    value += source.slice(run, i) + sequence.decoded;
    endsWithEscapedBackslash = sequence.decoded === "\\" && sequence.next - i === 2;
    i = run = sequence.next;
  }
  if (endsWithEscapedBackslash && run === i) {
    return {
      kind: "error",
      start: i - 2,
      reason: 'a string cannot end with an escaped backslash, because the collector reads \\" as an escaped quote; write the last backslash as \\x5c',
    };
  }
  value += source.slice(run, i);
  return { kind: "string", start, text: source.slice(start, i + 1), value };
}

/**
 * Where unit `k` of the decoded value of the string literal at `start` came
 * from in the source (its closing quote when `k` is the value's length).
 * Walks the literal again, so only errors pay for it.
 */
export function sourceIndex(source: string, start: number, k: number): number {
  let i = start + 1;
  let n = 0;
  while (source[i] !== '"' && i < source.length) {
    const sequence = source[i] === "\\" ? decodeEscape(source, i) : null;
    const units = sequence && "decoded" in sequence ? sequence.decoded.length : 1;
    if (n + units > k) return i;
    n += units;
    i = sequence && "next" in sequence ? sequence.next : i + 1;
  }
  return i;
}
