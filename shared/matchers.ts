/**
 * Attribute matchers in the syntax of Prometheus Alertmanager's UTF-8 matchers
 * (`env=prod`, `region=~"us-.*"`, `team!=test`), their regular expressions
 * with RE2's semantics, and matching them against a collector's attributes.
 * Server and UI alike: nothing here imports the server, and the regular
 * expressions run on re2js (a linear-time RE2 port), never on JS RegExp, so
 * a user's pattern cannot backtrack catastrophically and what RE2 refuses
 * (backreferences, lookarounds) is refused.
 *
 * Every rule below is read from upstream, github.com/prometheus/alertmanager at
 * revision 68fb2d5759b3a92c0bb2a1a13d4ef7ff5b06256d:
 * - the lexer: matcher/parse/lexer.go (`isReserved`, `scan`, `scanOperator`,
 *   `scanQuoted`, `scanUnquoted`); columns count runes (`cols`), as here code points;
 * - the grammar: matcher/parse/parse.go (`parseOpenBrace` … `parseEOF`: an optional
 *   `{…}`, matchers separated by commas, a trailing comma allowed) and `Matcher`
 *   (exactly one matcher, else "no matchers" / "expected 1 matcher, found N");
 * - quoted names and values: matcher/parse/token.go `unquote` (Go's
 *   `strconv.Unquote`, then the result must be valid UTF-8);
 * - regular expressions: pkg/labels/matcher.go `NewMatcher` compiles
 *   `"^(?:" + value + ")$"` with Go's regexp (RE2 syntax), and `Matches` tests it;
 * - an absent label reads as "": pkg/labels/matcher.go `Matchers.Matches`
 *   (`lset[name]` of a missing name is the empty string), all matchers must hold;
 * - printing: pkg/labels/matcher.go `Matcher.String` (a name with a reserved rune
 *   is quoted; the value is always quoted, escaping `\`, newline and `"`).
 * Error messages and their columns are ours (1-based), not upstream's text.
 *
 * Bounds (RE2's `max_mem` in spirit): a regular expression whose program has
 * more than MAX_MATCHER_PROGRAM instructions is refused, and so is a list
 * (one request's, one pipeline's) whose programs add up to more than
 * MAX_MATCHERS_PROGRAM. Matching runs RE2's NFA, whose cost is at most
 * about program size × value length, and values are bounded (tags 1,024
 * characters, reported ones 256), so one matcher on one collector stays
 * within milliseconds; fleet-wide
 * evaluations yield between collectors (server/store/view.ts `scan`). A
 * pattern is measured before it is compiled (`programBound`), as compiling a
 * program of 100,000 instructions alone holds the event loop for seconds.
 */
import { RE2JS } from "re2js";

export type MatchOperator = "=" | "!=" | "=~" | "!~";

/** Most instructions one matcher's regular expression may compile to. */
export const MAX_MATCHER_PROGRAM = 500;
/** Most instructions the regular expressions of one list (a request's, a pipeline's) may compile to together. */
export const MAX_MATCHERS_PROGRAM = 1000;

/** One problem with one field of an input, named by its path: the shape of a 400's `details`. */
export interface MatcherErrorDetail {
  path: string;
  message: string;
}

/** A matcher's text that does not parse: `column` is 1-based, in code points. */
export class MatcherSyntaxError extends Error {
  constructor(
    readonly input: string,
    readonly column: number,
    readonly reason: string,
  ) {
    super(`${JSON.stringify(input)}, column ${column}: ${reason}`);
    this.name = "MatcherSyntaxError";
  }
}

/** Some matchers of a list that do not parse, one detail each (`matchers[2]`). */
export class MatcherListError extends Error {
  constructor(readonly details: MatcherErrorDetail[]) {
    super(details.map((d) => `${d.path}: ${d.message}`).join("; "));
    this.name = "MatcherListError";
  }
}

/** Answers of one regular expression kept, by value (Matcher.found), and the longest value kept. */
const VERDICTS_KEPT = 1024;
const VERDICT_VALUE_MAX = 256;

/** A regular expression whose program is over MAX_MATCHER_PROGRAM instructions. */
export class MatcherProgramError extends Error {
  constructor(readonly size: number) {
    super(
      `the regular expression compiles to ${size > MAX_MATCHER_PROGRAM * 2 ? `more than ${MAX_MATCHER_PROGRAM * 2}` : size} RE2 instructions, more than the ${MAX_MATCHER_PROGRAM} a matcher may use; write a smaller pattern (fewer or smaller {n} counts) or select with tags`,
    );
    this.name = "MatcherProgramError";
  }
}

/** A parsed matcher: its name, operator and (unquoted) value; a regex one holds its compiled RE2 program. */
export class Matcher {
  readonly #re: RE2JS | null;
  /**
   * The regular expression's answers by value: a fleet has few distinct values per attribute (a region, a team), and a
   * publish judges every collector's. Bounded in count and in the length of a value kept.
   */
  readonly #verdicts = new Map<string, boolean>();
  /** Instructions of the compiled program (RE2's program size); 0 for = and !=. */
  readonly program: number;

  constructor(
    readonly name: string,
    readonly op: MatchOperator,
    readonly value: string,
  ) {
    if (op === "=~" || op === "!~") {
      // pkg/labels/matcher.go NewMatcher: the value is anchored by concatenation, exactly so.
      const pattern = `^(?:${value})$`;
      const bound = programBound(pattern);
      if (bound > MAX_MATCHER_PROGRAM * 2) throw new MatcherProgramError(bound);
      this.#re = RE2JS.compile(pattern);
      this.program = this.#re.programSize();
      if (this.program > MAX_MATCHER_PROGRAM) throw new MatcherProgramError(this.program);
    } else {
      this.#re = null;
      this.program = 0;
    }
  }

  /** Whether `value` (an attribute's value, "" when absent) satisfies this matcher. */
  matches(value: string): boolean {
    switch (this.op) {
      case "=":
        return value === this.value;
      case "!=":
        return value !== this.value;
      // RE2's NFA (or its bit-state backtracker on short inputs), never its lazy DFA: on a pattern that blows the
      // DFA's state cache (`.*a.{400}x`) the DFA costs several times more per instruction and character.
      case "=~":
        return this.found(value);
      case "!~":
        return !this.found(value);
    }
  }

  private found(value: string): boolean {
    let verdict = this.#verdicts.get(value);
    if (verdict === undefined) {
      verdict = this.#re!.matcher(value).find();
      if (this.#verdicts.size < VERDICTS_KEPT && value.length <= VERDICT_VALUE_MAX) this.#verdicts.set(value, verdict);
    }
    return verdict;
  }

  /** The matcher as text that parses back to it: pkg/labels/matcher.go `Matcher.String`. */
  toString(): string {
    const name = this.name === "" || [...this.name].some(isReserved) ? quote(this.name) : this.name;
    return `${name}${this.op}${quote(this.value)}`;
  }
}

/** Whether every matcher holds for `attributes`; an attribute that is absent reads as "". */
export function matches(matchers: readonly Matcher[], attributes: Readonly<Record<string, string>>): boolean {
  for (const m of matchers) {
    const value = Object.hasOwn(attributes, m.name) ? attributes[m.name]! : "";
    if (!m.matches(value)) return false;
  }
  return true;
}

/** Text of a list as Alertmanager prints one (`{a="b",c=~"d"}`): parses back with `parseMatchers`. */
export function formatMatchers(matchers: readonly Matcher[]): string {
  return `{${matchers.map(String).join(",")}}`;
}

/** Exactly one matcher (matcher/parse `Matcher`): `a=b`, `{a=b}` and `a=b,` alike. Throws MatcherSyntaxError. */
export function parseMatcher(input: string): Matcher {
  const parsed = parseWithStarts(input);
  if (parsed.length === 1) return parsed[0]!.matcher;
  if (parsed.length === 0) throw new MatcherSyntaxError(input, 1, "no matcher");
  throw new MatcherSyntaxError(input, parsed[1]!.column, `expected one matcher, found ${parsed.length}`);
}

/** Zero or more matchers (matcher/parse `Matchers`): `{a=b, c!~"d.*"}`, braces optional. Throws MatcherSyntaxError. */
export function parseMatchers(input: string): Matcher[] {
  return parseWithStarts(input).map((p) => p.matcher);
}

/**
 * A list of matchers, one per string, as a request carries them: every string that does
 * not parse is one detail, `{path: "matchers[2]", message: "\"env=:x\", column 5: …"}`.
 * Throws MatcherListError.
 */
export function parseMatcherList(inputs: readonly string[], path = "matchers"): Matcher[] {
  const out: Matcher[] = [];
  const details: MatcherErrorDetail[] = [];
  // Measured before any is compiled (only text with a regex operator can hold one): a list far over the total compiles
  // nothing. One far over the cap on its own is refused by its Matcher, uncompiled, and named.
  const bound = inputs
    .map((input) => (input.includes("~") ? programBound(input) : 0))
    .reduce((sum, size) => sum + (size > MAX_MATCHER_PROGRAM * 2 ? 0 : size), 0);
  if (bound > MAX_MATCHERS_PROGRAM * 2) throw new MatcherListError([{ path, message: overTotal(`more than ${MAX_MATCHERS_PROGRAM * 2}`) }]);
  inputs.forEach((input, i) => {
    try {
      out.push(parseMatcher(input));
    } catch (error) {
      if (!(error instanceof MatcherSyntaxError)) throw error;
      details.push({ path: `${path}[${i}]`, message: error.message });
    }
  });
  if (details.length > 0) throw new MatcherListError(details);
  const total = out.reduce((sum, m) => sum + m.program, 0);
  if (total > MAX_MATCHERS_PROGRAM) throw new MatcherListError([{ path, message: overTotal(String(total)) }]);
  return out;
}

const overTotal = (size: string) =>
  `the regular expressions compile to ${size} RE2 instructions together, more than the ${MAX_MATCHERS_PROGRAM} one list of matchers may use`;

/** Sticky: a valid repetition count, `{n}`, `{n,}` or `{n,m}` (otherwise a brace is a literal, as in Go). */
const COUNT = /\{([0-9]+)(,([0-9]*))?\}/y;
/** Sticky: what opens a group: `(`, `(?:`, `(?i:`, `(?i)`'s first part, `(?P<name>`. */
const GROUP_HEADER = /\((?:\?(?:P?<[^>]*>|[imsU-]*:?))?/y;
/** Sticky: the rest of a `\p{…}`, `\x{…}` escape's braces. */
const BRACED = /\{[^}]*\}/y;
/** Instructions a Unicode class stands for here: compiling one costs as much as about that many plain ones. */
const UNICODE_CLASS_WEIGHT = 16;

/**
 * An upper bound on the instructions `text` compiles to, read from the text
 * alone (no parse, linear in its length): literals and classes count 1
 * (Unicode classes UNICODE_CLASS_WEIGHT), `*`, `+`, `?` and `|` 1 more, a
 * capturing group 2, and `x{n,m}` max(n,m) copies of x plus one per optional
 * copy, as RE2's simplifier expands it. Any text may be given (a whole
 * matcher, a pattern); what is not RE2 syntax only makes the bound larger.
 */
export function programBound(text: string): number {
  // One frame per open group: `alts` are the finished alternatives, `cur` the one being read, `last` its last item.
  const stack: { alts: number; cur: number; last: number; capture: boolean }[] = [];
  let frame = { alts: 0, cur: 0, last: 0, capture: false };
  const item = (size: number) => {
    frame.cur += size;
    frame.last = size;
  };
  for (let i = 0; i < text.length; ) {
    const c = text[i]!;
    if (c === "\\") {
      const e = text[i + 1];
      if (e === "Q") {
        const end = text.indexOf("\\E", i + 2);
        const literal = end < 0 ? text.length - i - 2 : end - i - 2;
        frame.cur += literal;
        frame.last = 1;
        i = end < 0 ? text.length : end + 2;
        continue;
      }
      i += 2;
      if (e === "p" || e === "P" || e === "x") {
        BRACED.lastIndex = i;
        if (BRACED.test(text)) i = BRACED.lastIndex;
        else if (e !== "x") i++;
      }
      item(e === "p" || e === "P" ? UNICODE_CLASS_WEIGHT : 1);
    } else if (c === "[") {
      // A class is one instruction; its Unicode classes weigh as above.
      let j = i + 1;
      if (text[j] === "^") j++;
      if (text[j] === "]") j++;
      let size = 1;
      while (j < text.length && text[j] !== "]") {
        if (text[j] === "\\") {
          if (text[j + 1] === "p" || text[j + 1] === "P") size += UNICODE_CLASS_WEIGHT;
          j += 2;
          BRACED.lastIndex = j;
          if (BRACED.test(text)) j = BRACED.lastIndex;
        } else if (text.startsWith("[:", j)) {
          const close = text.indexOf(":]", j + 2);
          j = close < 0 ? j + 1 : close + 2;
        } else {
          j++;
        }
      }
      i = j + 1;
      item(size);
    } else if (c === "(") {
      stack.push(frame);
      GROUP_HEADER.lastIndex = i;
      const header = GROUP_HEADER.exec(text)![0];
      frame = { alts: 0, cur: 0, last: 0, capture: header === "(" || header.includes("<") };
      i += header.length;
    } else if (c === ")" && stack.length > 0) {
      const inner = frame.alts + frame.cur + (frame.capture ? 2 : 0);
      frame = stack.pop()!;
      item(inner);
      i++;
    } else if (c === "|") {
      frame.alts += frame.cur + 1;
      frame.cur = 0;
      frame.last = 0;
      i++;
    } else if (c === "*" || c === "+" || c === "?") {
      frame.cur += 1;
      frame.last += 1;
      i++;
    } else {
      COUNT.lastIndex = i;
      const count = c === "{" ? COUNT.exec(text) : null;
      if (count) {
        const min = Number(count[1]);
        const max = count[2] === undefined ? min : count[3] === "" ? min + 1 : Math.max(min, Number(count[3]));
        // A count over RE2's 1,000 is its syntax error: left for the compiler to name.
        const repeated = max > 1000 ? frame.last : frame.last * max + (max - min);
        frame.cur += repeated - frame.last;
        frame.last = repeated;
        i = COUNT.lastIndex;
      } else {
        item(1);
        i += (text.codePointAt(i) ?? 0) > 0xffff ? 2 : 1;
      }
    }
  }
  // Every program also has its fail and match instructions; groups left open (not RE2 syntax) count what they hold.
  let size = 2 + frame.alts + frame.cur;
  for (const open of stack) size += open.alts + open.cur;
  return size;
}

// ---- lexer: matcher/parse/lexer.go ---------------------------------------------------------

type TokenKind = "{" | "}" | "," | "=" | "!=" | "=~" | "!~" | "quoted" | "unquoted" | "eof";

interface Token {
  kind: TokenKind;
  /** The token's text as written (quotes included). */
  text: string;
  /** 1-based column of the token's first code point. */
  column: number;
}

/** Go's unicode.IsSpace: Latin-1 spaces plus the White_Space code points beyond. */
function isSpace(r: string): boolean {
  switch (r) {
    case "\t":
    case "\n":
    case "\v":
    case "\f":
    case "\r":
    case " ":
    case "\u0085":
    case "\u00a0":
      return true;
  }
  const c = r.codePointAt(0)!;
  return c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000;
}

/** ASCII runes that end an unquoted name or value (a table: the lexer asks for every rune). */
const RESERVED_ASCII = (() => {
  const table = new Uint8Array(128);
  for (const r of "{}!=~,\\\"'`\t\n\v\f\r ") table[r.charCodeAt(0)] = 1;
  return table;
})();

/** lexer.go isReserved: these end an unquoted name or value. */
function isReserved(r: string): boolean {
  const c = r.charCodeAt(0);
  return c < 128 ? RESERVED_ASCII[c] === 1 : isSpace(r);
}

class Lexer {
  readonly #runes: string[];
  #pos = 0;
  #error: MatcherSyntaxError | null = null;

  constructor(readonly input: string) {
    this.#runes = Array.from(input);
  }

  get length(): number {
    return this.#runes.length;
  }

  /** The token peeked last and where it ends, so the scan that follows a peek does not read it again. */
  #peeked: { at: number; token: Token; end: number } | null = null;

  peek(): Token {
    const pos = this.#pos;
    try {
      const token = this.scan();
      this.#peeked = { at: pos, token, end: this.#pos };
      return token;
    } finally {
      this.#pos = pos;
    }
  }

  /** The next token; a lexical error is thrown, and thrown again on every later call. */
  scan(): Token {
    if (this.#error) throw this.#error;
    const peeked = this.#peeked;
    if (peeked !== null && peeked.at === this.#pos) {
      this.#pos = peeked.end;
      return peeked.token;
    }
    try {
      return this.#scan();
    } catch (error) {
      if (error instanceof MatcherSyntaxError) this.#error = error;
      throw error;
    }
  }

  #fail(column: number, reason: string): never {
    throw new MatcherSyntaxError(this.input, column, reason);
  }

  #token(kind: TokenKind, start: number): Token {
    return { kind, text: this.#runes.slice(start, this.#pos).join(""), column: start + 1 };
  }

  #scan(): Token {
    const runes = this.#runes;
    while (this.#pos < runes.length) {
      const start = this.#pos;
      const r = runes[this.#pos++]!;
      switch (r) {
        case "{":
        case "}":
        case ",":
          return this.#token(r, start);
        case "!":
          if (runes[this.#pos] === "=") return (this.#pos++, this.#token("!=", start));
          if (runes[this.#pos] === "~") return (this.#pos++, this.#token("!~", start));
          this.#fail(start + 1, `"!" must be followed by "=" or "~"`);
        case "=":
          if (runes[this.#pos] === "~") return (this.#pos++, this.#token("=~", start));
          return this.#token("=", start);
        case '"': {
          let escaped = false;
          while (this.#pos < runes.length) {
            const c = runes[this.#pos++]!;
            if (escaped) escaped = false;
            else if (c === "\\") escaped = true;
            else if (c === '"') return this.#token("quoted", start);
          }
          this.#fail(start + 1, `missing the closing '"' of ${runes.slice(start).join("")}`);
        }
      }
      if (!isReserved(r)) {
        while (this.#pos < runes.length && !isReserved(runes[this.#pos]!)) this.#pos++;
        return this.#token("unquoted", start);
      }
      if (!isSpace(r)) {
        this.#fail(start + 1, `unexpected ${JSON.stringify(r)}${r === "\\" ? " (escapes are only allowed in double quotes)" : ""}`);
      }
    }
    return { kind: "eof", text: "", column: runes.length + 1 };
  }
}

// ---- quoted text: token.go unquote (Go strconv.Unquote) ------------------------------------

const utf8 = new TextEncoder();
const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
const SIMPLE_ESCAPES: Record<string, number> = { a: 7, b: 8, f: 12, n: 10, r: 13, t: 9, v: 11, "\\": 92, '"': 34 };
const HEX = /^[0-9a-fA-F]+$/;

/** The value of a double-quoted token, Go's escapes decoded; an error text when it has none. */
function unquote(text: string): string | { error: string } {
  const inner = text.slice(1, -1);
  // Without escapes the text is its value (the input holds no lone surrogate: parseWithStarts checks).
  if (!inner.includes("\\")) return inner.includes("\n") ? { error: "a newline in quotes must be written \\n" } : inner;
  const body = Array.from(inner);
  const bytes: number[] = [];
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === "\n") return { error: "a newline in quotes must be written \\n" };
    if (c !== "\\") {
      bytes.push(...utf8.encode(c));
      continue;
    }
    const e = body[++i];
    if (e === undefined) return { error: "incomplete escape" };
    if (e in SIMPLE_ESCAPES) {
      bytes.push(SIMPLE_ESCAPES[e]!);
      continue;
    }
    const digits = e === "x" ? 2 : e === "u" ? 4 : e === "U" ? 8 : 0;
    if (digits > 0) {
      const hex = body.slice(i + 1, i + 1 + digits).join("");
      if (hex.length !== digits || !HEX.test(hex)) return { error: `invalid escape \\${e}${hex}` };
      i += digits;
      const v = parseInt(hex, 16);
      if (e === "x") bytes.push(v);
      else if (v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return { error: `\\${e}${hex} is not a valid code point` };
      else bytes.push(...utf8.encode(String.fromCodePoint(v)));
      continue;
    }
    if (e >= "0" && e <= "7") {
      const oct = body.slice(i, i + 3).join("");
      if (!/^[0-7]{3}$/.test(oct)) return { error: `invalid escape \\${oct}` };
      const v = parseInt(oct, 8);
      if (v > 255) return { error: `invalid escape \\${oct}` };
      bytes.push(v);
      i += 2;
      continue;
    }
    return { error: `invalid escape \\${e}` };
  }
  try {
    return strictUtf8.decode(new Uint8Array(bytes));
  } catch {
    return { error: "the escapes do not spell valid UTF-8" };
  }
}

/** Text in double quotes that `unquote` reads back as `s`: pkg/labels/matcher.go openMetricsEscape. */
function quote(s: string): string {
  return `"${s.replace(/[\\\n"]/g, (c) => (c === "\n" ? "\\n" : `\\${c}`))}"`;
}

// ---- parser: matcher/parse/parse.go --------------------------------------------------------

function describe(t: Token): string {
  return t.kind === "eof" ? "end of input" : JSON.stringify(t.text);
}

function parseWithStarts(input: string): { matcher: Matcher; column: number }[] {
  if (/\p{Surrogate}/u.test(input)) {
    const at = Array.from(input).findIndex((r) => /\p{Surrogate}/u.test(r));
    throw new MatcherSyntaxError(input, at + 1, "a lone UTF-16 surrogate is not text");
  }
  const l = new Lexer(input);
  const fail = (column: number, reason: string): never => {
    throw new MatcherSyntaxError(input, column, reason);
  };
  const out: { matcher: Matcher; column: number }[] = [];

  // parseOpenBrace
  let t = l.peek();
  if (t.kind === "eof") return out;
  const hasOpenBrace = t.kind === "{";
  if (hasOpenBrace) {
    l.scan();
    t = l.peek();
  }
  if (t.kind !== "eof" && t.kind !== "}") {
    // parseMatcher, then parseEndOfMatcher / parseComma, until neither continues.
    for (;;) {
      const nameToken = l.peek();
      if (nameToken.kind !== "quoted" && nameToken.kind !== "unquoted") fail(nameToken.column, `unexpected ${describe(nameToken)}; expected a label name`);
      l.scan();
      const name = nameToken.kind === "quoted" ? unquote(nameToken.text) : nameToken.text;
      if (typeof name !== "string") fail(nameToken.column, `${nameToken.text}: ${name.error}`);
      const opToken = l.peek();
      if (opToken.kind !== "=" && opToken.kind !== "!=" && opToken.kind !== "=~" && opToken.kind !== "!~") {
        fail(opToken.column, `unexpected ${describe(opToken)}; expected an operator: =, !=, =~ or !~`);
      }
      l.scan();
      const valueToken = l.peek();
      if (valueToken.kind !== "quoted" && valueToken.kind !== "unquoted") fail(valueToken.column, `unexpected ${describe(valueToken)}; expected a value`);
      l.scan();
      const value = valueToken.kind === "quoted" ? unquote(valueToken.text) : valueToken.text;
      if (typeof value !== "string") fail(valueToken.column, `${valueToken.text}: ${value.error}`);
      let matcher: Matcher;
      try {
        matcher = new Matcher(name as string, opToken.kind as MatchOperator, value as string);
      } catch (error) {
        fail(valueToken.column, error instanceof MatcherProgramError ? error.message : `invalid regular expression (RE2 syntax): ${(error as Error).message}`);
      }
      out.push({ matcher: matcher!, column: nameToken.column });

      // parseEndOfMatcher
      const end = l.peek();
      if (end.kind === "eof" || end.kind === "}") break;
      if (end.kind !== ",") fail(end.column, `unexpected ${describe(end)}; expected a comma${hasOpenBrace ? " or a closing brace" : ""}`);
      // parseComma
      l.scan();
      const after = l.peek();
      if (after.kind === "eof" || after.kind === "}") break;
      if (after.kind !== "quoted" && after.kind !== "unquoted") fail(after.column, `unexpected ${describe(after)}; expected a matcher after the comma`);
    }
  }
  // parseCloseBrace
  const close = l.peek();
  if (hasOpenBrace) {
    if (close.kind !== "}") fail(close.column, `unexpected ${describe(close)}; expected a closing brace`);
    l.scan();
  } else if (close.kind === "}") {
    fail(close.column, `unexpected "}" without an opening brace`);
  }
  // parseEOF
  const rest = l.scan();
  if (rest.kind !== "eof") fail(rest.column, `unexpected ${describe(rest)}; expected the end of the matcher`);
  return out;
}
