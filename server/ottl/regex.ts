/**
 * OTTL regexes are Go RE2, and the same text goes into real collector
 * configs, so a pattern is parsed here with RE2's rules (the Perl flags of
 * Go's regexp.Compile) and re-emitted as a JavaScript pattern with the same
 * matches. What RE2 rejects is rejected with its position; RE2 syntax that JS
 * spells differently is translated: `(?i)`/`(?s)`/`(?m)`/`(?U)` flags,
 * `(?P<name>...)`, `\A`, `\z`, `\Q...\E`, POSIX classes, octal and `\x{...}`
 * escapes, and RE2's ASCII-only `\s`, `.` and `\b`. Unicode classes are
 * limited to general categories whose JS meaning is the same.
 */

import { BoundedMap } from "../lib/bounded-map.ts";

export class Re2Error extends Error {
  /** @param offset where the problem starts in the pattern (UTF-16 units) */
  constructor(
    readonly offset: number,
    readonly reason: string,
  ) {
    super(reason);
    this.name = "Re2Error";
  }
}

interface Flags {
  i: boolean;
  m: boolean;
  s: boolean;
  U: boolean;
}

/**
 * `fold` is the case-folding an atom needs (null: it does not care), so the
 * emitter can wrap runs of atoms in `(?i:...)`/`(?-i:...)` only where the
 * folding in force in the output differs. `single` atoms take a quantifier
 * as they are.
 */
type Node =
  | { t: "atom"; src: string; fold: boolean | null; single: boolean }
  | { t: "group"; body: Node }
  | { t: "alt"; alts: Node[] }
  | { t: "concat"; items: Node[] }
  | { t: "repeat"; sub: Node; min: number; max: number; greedy: boolean; counted: boolean };

/** A class item: an inclusive code point range or a JS class escape such as `\p{Lu}`. */
type ClassItem = [number, number] | string;

/** Sticky patterns for the parser, matched at its position without slicing the rest. */
const COUNT = /\{(0|[1-9][0-9]*)(,(0|[1-9][0-9]*)?)?\}/y;
const NAMED = /\(\?P?<([^>]*)>/y;
const FLAGS = /\(\?([imsU]*)(?:-([imsU]*))?([:)])/y;
const UNICODE_CLASS = /\\[pP](?:\{(\^?)([^}]*)\}|(.))/suy;
const HEX_ESCAPE = /\{([0-9A-Fa-f]+)\}|([0-9A-Fa-f]{2})/y;

const MAX_REPEAT = 1000;
const MAX_DEPTH = 1000;

const ranges = (spec: string): [number, number][] =>
  spec.split(",").map((r) => {
    const [lo, hi] = r.split("-").map((h) => parseInt(h, 16));
    return [lo!, hi ?? lo!];
  });

const DIGIT = ranges("30-39");
const WORD = ranges("30-39,41-5a,5f,61-7a");
/** RE2's \s: no \v and nothing beyond ASCII, unlike JS. */
const SPACE = ranges("9-a,c-d,20");

const POSIX: Record<string, [number, number][]> = {
  alnum: ranges("30-39,41-5a,61-7a"),
  alpha: ranges("41-5a,61-7a"),
  ascii: ranges("0-7f"),
  blank: ranges("9,20"),
  cntrl: ranges("0-1f,7f"),
  digit: DIGIT,
  graph: ranges("21-7e"),
  lower: ranges("61-7a"),
  print: ranges("20-7e"),
  punct: ranges("21-2f,3a-40,5b-60,7b-7e"),
  space: ranges("9-d,20"),
  upper: ranges("41-5a"),
  word: WORD,
  xdigit: ranges("30-39,41-46,61-66"),
};

/** General categories; Go's `C` leaves out unassigned code points and JS's does not, so it is not here. */
const CATEGORIES = new Set("L Ll Lm Lo Lt Lu M Mc Me Mn N Nd Nl No P Pc Pd Pe Pf Pi Po Ps S Sc Sk Sm So Z Zl Zp Zs Cc Cf Co Cs".split(" "));

function complement(set: [number, number][]): [number, number][] {
  const out: [number, number][] = [];
  let next = 0;
  for (const [lo, hi] of set) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= 0x10ffff) out.push([next, 0x10ffff]);
  return out;
}

const hasLetters = (set: [number, number][]) => set.some(([lo, hi]) => lo <= 0x7a && hi >= 0x41);

/** Characters written as themselves in the JS output; everything else as `\u{...}`. */
const PLAIN = /^[0-9A-Za-z_ !"#%&',:;<=>@`~-]$/;
const SYNTAX = new Set("^$\\.*+?()[]{}|/");

function literalSource(cp: number): string {
  const ch = String.fromCodePoint(cp);
  if (SYNTAX.has(ch)) return "\\" + ch;
  if (PLAIN.test(ch)) return ch;
  return `\\u{${cp.toString(16)}}`;
}

function classCharSource(cp: number): string {
  const ch = String.fromCodePoint(cp);
  return ch !== "-" && PLAIN.test(ch) ? ch : `\\u{${cp.toString(16)}}`;
}

function classSource(negated: boolean, items: ClassItem[]): string {
  let body = "";
  for (const item of items) {
    if (typeof item === "string") body += item;
    else if (item[0] === item[1]) body += classCharSource(item[0]);
    else body += `${classCharSource(item[0])}-${classCharSource(item[1])}`;
  }
  // An empty positive class matches nothing; JS spells that [] as well.
  return `[${negated ? "^" : ""}${body}]`;
}

class Parser {
  private i = 0;
  private depth = 0;
  /** The named groups seen, in order: what Go's SubexpNames lists. */
  readonly names = new Set<string>();
  private flags: Flags = { i: false, m: false, s: false, U: false };

  constructor(private readonly p: string) {}

  parse(): Node {
    const node = this.parseAlt();
    if (this.i < this.p.length) throw new Re2Error(this.i, "unexpected ')' without a matching '('");
    return node;
  }

  private fail(reason: string, at = this.i): never {
    throw new Re2Error(at, reason);
  }

  private parseAlt(): Node {
    const alts = [this.parseConcat()];
    while (this.p[this.i] === "|") {
      this.i++;
      alts.push(this.parseConcat());
    }
    return alts.length === 1 ? alts[0]! : { t: "alt", alts };
  }

  private parseConcat(): Node {
    const items: Node[] = [];
    let lastWasRepeat = false;
    while (this.i < this.p.length) {
      const c = this.p[this.i]!;
      if (c === "|" || c === ")") break;
      const start = this.i;
      const repeat = this.parseRepeatOp();
      if (repeat) {
        const sub = items.pop();
        if (!sub) this.fail(`missing argument to repetition operator '${this.p.slice(start, this.i)}'`, start);
        if (lastWasRepeat) this.fail("a repetition operator cannot follow another (a** or a+?*); group it: (?:a*)*", start);
        const node: Node = { t: "repeat", sub, ...repeat };
        if (repeat.counted && (repeat.min >= 2 || repeat.max >= 2) && !repeatIsValid(node, MAX_REPEAT)) {
          this.fail(`nested repetition counts multiply to more than ${MAX_REPEAT}`, start);
        }
        items.push(node);
        lastWasRepeat = true;
        continue;
      }
      lastWasRepeat = false;
      if (c === "(") {
        const group = this.parseGroup();
        if (group) items.push(group);
      } else if (c === "[") {
        items.push(this.parseClass());
      } else if (c === "\\") {
        items.push(...this.parseEscapeAtom());
      } else if (c === ".") {
        this.i++;
        items.push({ t: "atom", src: this.flags.s ? "[^]" : "[^\\n]", fold: null, single: true });
      } else if (c === "^") {
        this.i++;
        items.push({ t: "atom", src: this.flags.m ? "(?<![^\\n])" : "^", fold: null, single: false });
      } else if (c === "$") {
        this.i++;
        items.push({ t: "atom", src: this.flags.m ? "(?![^\\n])" : "$", fold: null, single: false });
      } else {
        items.push(this.literal(this.nextCodePoint()));
      }
    }
    return items.length === 1 ? items[0]! : { t: "concat", items };
  }

  private nextCodePoint(): number {
    const cp = this.p.codePointAt(this.i)!;
    this.i += cp > 0xffff ? 2 : 1;
    return cp;
  }

  private literal(cp: number): Node {
    return { t: "atom", src: literalSource(cp), fold: this.flags.i, single: true };
  }

  /** `*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}`, each optionally followed by `?`. Null when not at one. */
  private parseRepeatOp(): { min: number; max: number; greedy: boolean; counted: boolean } | null {
    const c = this.p[this.i];
    let min: number;
    let max: number;
    let counted = false;
    if (c === "*" || c === "+" || c === "?") {
      [min, max] = c === "*" ? [0, -1] : c === "+" ? [1, -1] : [0, 1];
      this.i++;
    } else if (c === "{") {
      // As in Go, a brace that does not form a valid count is a literal.
      const m = this.match(COUNT);
      if (!m) return null;
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === undefined ? -1 : Number(m[3]);
      if (min > MAX_REPEAT || max > MAX_REPEAT || (max >= 0 && min > max)) {
        this.fail(`invalid repeat count ${m[0]}: counts go up to ${MAX_REPEAT} and the minimum may not exceed the maximum`);
      }
      counted = true;
      this.i += m[0].length;
    } else {
      return null;
    }
    let nonGreedy = this.flags.U;
    if (this.p[this.i] === "?") {
      nonGreedy = !nonGreedy;
      this.i++;
    }
    return { min, max, greedy: !nonGreedy, counted };
  }

  /** A sticky match of `re` at the current position, or null. */
  private match(re: RegExp): RegExpExecArray | null {
    re.lastIndex = this.i;
    return re.exec(this.p);
  }

  private at(text: string): boolean {
    return this.p.startsWith(text, this.i);
  }

  /** A group, or null for a flags directive such as `(?i)` that only changes flags. */
  private parseGroup(): Node | null {
    const start = this.i;
    if (this.at("(?=") || this.at("(?!")) this.fail("lookahead (?= and (?! is not supported by RE2");
    if (this.at("(?<=") || this.at("(?<!")) this.fail("lookbehind (?<= and (?<! is not supported by RE2");
    if (this.at("(?>")) this.fail("atomic groups (?> are not supported by RE2");
    if (this.at("(?P=") || this.at("(?P>")) this.fail("backreferences are not supported by RE2");
    if (this.at("(?P<") || this.at("(?<")) {
      const named = this.match(NAMED);
      if (!named) this.fail("invalid named group: expected (?P<name>...)");
      const name = named[1]!;
      if (!/^[A-Za-z0-9_]+$/.test(name)) this.fail(`invalid group name '${name}': use letters, digits and _`);
      if (this.names.has(name)) this.fail(`duplicate group name '${name}'`);
      this.names.add(name);
      this.i += named[0].length;
      return this.groupBody(start, this.flags);
    }
    if (!this.at("(?")) {
      this.i++;
      return this.groupBody(start, this.flags);
    }
    // (?flags) or (?flags:re), flags from imsU, with at most one '-'.
    const m = this.match(FLAGS);
    if (!m || m[2] === "") this.fail("invalid or unsupported Perl syntax after '(?'");
    const flags = { ...this.flags };
    for (const f of m[1]!) flags[f as keyof Flags] = true;
    for (const f of m[2] ?? "") flags[f as keyof Flags] = false;
    this.i += m[0].length;
    if (m[3] === ")") {
      this.flags = flags;
      return null;
    }
    return this.groupBody(start, flags);
  }

  private groupBody(start: number, flags: Flags): Node {
    if (++this.depth > MAX_DEPTH) this.fail(`groups nest more than ${MAX_DEPTH} deep`, start);
    const outer = this.flags;
    this.flags = flags;
    const body = this.parseAlt();
    if (this.p[this.i] !== ")") this.fail("missing closing ')'", start);
    this.i++;
    this.flags = outer;
    this.depth--;
    return { t: "group", body };
  }

  private parseEscapeAtom(): Node[] {
    const start = this.i;
    const e = this.p[this.i + 1];
    switch (e) {
      case "A":
        this.i += 2;
        return [{ t: "atom", src: "^", fold: null, single: false }];
      case "z":
        this.i += 2;
        return [{ t: "atom", src: "$", fold: null, single: false }];
      case "b":
      case "B":
        // RE2's word boundary is ASCII-only even under (?i); JS's is too, but only without i.
        this.i += 2;
        return [{ t: "atom", src: `\\${e}`, fold: false, single: false }];
      case "C":
        this.fail("\\C (any byte) is not supported by RE2");
      case "Q": {
        const end = this.p.indexOf("\\E", this.i + 2);
        const text = this.p.slice(this.i + 2, end < 0 ? undefined : end);
        this.i = end < 0 ? this.p.length : end + 2;
        return [...text].map((ch) => this.literal(ch.codePointAt(0)!));
      }
    }
    const cls = this.parseClassEscape();
    if (cls) {
      const src = cls.length === 1 && typeof cls[0] === "string" ? cls[0] : classSource(false, cls);
      const fold = src === "\\d" || src === "\\D" || cls.every((it) => typeof it !== "string" && !hasLetters([it])) ? null : this.flags.i;
      return [{ t: "atom", src, fold, single: true }];
    }
    this.i = start;
    return [this.literal(this.parseEscape())];
  }

  /**
   * `\d \D \s \S \w \W` and `\pX \p{X} \PX \P{X} \p{^X}` as class items,
   * or null (position unchanged) when not at one.
   */
  private parseClassEscape(): ClassItem[] | null {
    const e = this.p[this.i + 1];
    switch (e) {
      case "d":
      case "D":
      case "w":
      case "W":
        this.i += 2;
        return [`\\${e}`];
      case "s":
        this.i += 2;
        return SPACE;
      case "S":
        this.i += 2;
        return complement(SPACE);
      case "p":
      case "P": {
        const start = this.i;
        const m = this.match(UNICODE_CLASS);
        if (!m) this.fail("missing name after \\p");
        const name = m[2] ?? m[3]!;
        const negated = (e === "P") !== (m[1] === "^");
        this.i += m[0].length;
        if (name === "Any") return negated ? [] : [[0, 0x10ffff]];
        if (!CATEGORIES.has(name)) {
          this.fail(
            name === "C"
              ? "\\p{C} is not supported: RE2 and JavaScript disagree on unassigned code points; use Cc, Cf, Co or Cs"
              : `unsupported Unicode class '${name}': only general categories such as L, Lu, Nd, P are supported`,
            start,
          );
        }
        return [`\\${negated ? "P" : "p"}{${name}}`];
      }
    }
    return null;
  }

  /** A single-character escape: Go's parseEscape. */
  private parseEscape(): number {
    const start = this.i;
    this.i++;
    if (this.i >= this.p.length) this.fail("trailing backslash at end of pattern", start);
    const cp = this.nextCodePoint();
    const c = String.fromCodePoint(cp);
    if (cp < 0x80 && !/[0-9A-Za-z]/.test(c)) return cp;
    if (c >= "1" && c <= "7" && !/[0-7]/.test(this.p[this.i] ?? "")) {
      this.fail(`backreferences (\\${c}) are not supported by RE2`, start);
    }
    if (c >= "0" && c <= "7") {
      let value = cp - 0x30;
      for (let k = 0; k < 2 && /[0-7]/.test(this.p[this.i] ?? ""); k++) value = value * 8 + (this.p.charCodeAt(this.i++) - 0x30);
      return value;
    }
    if (c === "x") {
      const m = this.match(HEX_ESCAPE);
      const value = m ? parseInt(m[1] ?? m[2]!, 16) : NaN;
      if (!m || value > 0x10ffff) this.fail("invalid \\x escape: use \\xHH or \\x{H...} up to 10FFFF", start);
      this.i += m[0].length;
      return value;
    }
    const simple: Record<string, number> = { a: 7, f: 12, n: 10, r: 13, t: 9, v: 11 };
    if (c in simple) return simple[c]!;
    const hint = c === "k" || c === "g" ? " (backreferences are not supported by RE2)" : c === "Z" ? " (RE2 has \\z only)" : "";
    this.fail(`invalid escape '\\${c}'${hint}`, start);
  }

  private parseClass(): Node {
    const start = this.i;
    this.i++;
    const negated = this.p[this.i] === "^";
    if (negated) this.i++;
    const items: ClassItem[] = [];
    let first = true;
    while (first || this.p[this.i] !== "]") {
      if (this.i >= this.p.length) this.fail("missing closing ']'", start);
      first = false;
      if (this.p.startsWith("[:", this.i)) {
        const close = this.p.indexOf(":]", this.i + 2);
        if (close >= 0) {
          const spec = this.p.slice(this.i + 2, close);
          const set = POSIX[spec.replace(/^\^/, "")];
          if (!set) this.fail(`unknown POSIX class [:${spec}:]`);
          if (spec.startsWith("^") && this.flags.i && hasLetters(set)) {
            this.fail(`negated POSIX class [:${spec}:] is not supported under (?i)`);
          }
          items.push(...(spec.startsWith("^") ? complement(set) : set));
          this.i = close + 2;
          continue;
        }
      }
      if (this.p[this.i] === "\\") {
        const cls = this.parseClassEscape();
        if (cls) {
          items.push(...cls);
          continue;
        }
      }
      const lo = this.classChar(start);
      if (this.p[this.i] === "-" && this.i + 1 < this.p.length && this.p[this.i + 1] !== "]") {
        const rangeStart = this.i;
        this.i++;
        const hi = this.classChar(start);
        if (hi < lo) this.fail("invalid class range: the end is before the start", rangeStart);
        items.push([lo, hi]);
      } else {
        items.push([lo, lo]);
      }
    }
    this.i++;
    return { t: "atom", src: classSource(negated, items), fold: this.flags.i, single: true };
  }

  private classChar(classStart: number): number {
    if (this.i >= this.p.length) this.fail("missing closing ']'", classStart);
    if (this.p[this.i] === "\\") {
      if (this.p[this.i + 1] === "b") this.fail("\\b is not allowed in a class; write \\x08 for a backspace");
      return this.parseEscape();
    }
    return this.nextCodePoint();
  }
}

/** Go's repeatIsValid: nested `{n,m}` counts may not multiply past `n` copies. */
function repeatIsValid(node: Node, n: number): boolean {
  if (node.t === "repeat" && node.counted) {
    let m = node.max;
    if (m === 0) return true;
    if (m < 0) m = node.min;
    if (m > n) return false;
    if (m > 0) n = Math.floor(n / m);
  }
  switch (node.t) {
    case "atom":
      return true;
    case "group":
      return repeatIsValid(node.body, n);
    case "repeat":
      return repeatIsValid(node.sub, n);
    case "alt":
      return node.alts.every((a) => repeatIsValid(a, n));
    case "concat":
      return node.items.every((a) => repeatIsValid(a, n));
  }
}

function quantifier(min: number, max: number): string {
  if (min === 0 && max === -1) return "*";
  if (min === 1 && max === -1) return "+";
  if (min === 0 && max === 1) return "?";
  if (max === -1) return `{${min},}`;
  return min === max ? `{${min}}` : `{${min},${max}}`;
}

const modifier = (fold: boolean, body: string) => `(?${fold ? "" : "-"}i:${body})`;

/** Emits JS source for `node` where case folding `fold` is in force. */
function emit(node: Node, fold: boolean): string {
  switch (node.t) {
    case "atom":
      return node.fold === null || node.fold === fold ? node.src : modifier(node.fold, node.src);
    case "group":
      return `(?:${emit(node.body, fold)})`;
    case "alt":
      return node.alts.map((a) => emit(a, fold)).join("|");
    case "repeat": {
      const q = quantifier(node.min, node.max) + (node.greedy ? "" : "?");
      const sub = node.sub;
      const inner = emit(sub, fold);
      const direct = sub.t === "group" || (sub.t === "atom" && (sub.single || (sub.fold !== null && sub.fold !== fold)));
      return direct ? inner + q : `(?:${inner})${q}`;
    }
    case "concat": {
      // Runs of atoms that need the same folding share one modifier group.
      let out = "";
      let run: Node[] = [];
      let runFold: boolean | null = null;
      const flush = () => {
        const f = runFold ?? fold;
        const body = run.map((n) => emit(n, f)).join("");
        out += f === fold ? body : modifier(f, body);
        run = [];
        runFold = null;
      };
      for (const item of node.items) {
        const need = item.t === "atom" ? item.fold : null;
        if (need !== null && runFold !== null && need !== runFold) flush();
        if (need !== null) runFold = need;
        run.push(item);
      }
      flush();
      return out;
    }
  }
}

/** The JS pattern (for flag `u`, plus `i` when the pattern starts with `(?i)`) that matches what RE2 matches. */
export function translateRe2(pattern: string): { source: string; flags: string } {
  const root = new Parser(pattern).parse();
  const fold = /^\(\?[msU]*i[msU]*\)/.test(pattern);
  const source = emit(root, fold);
  return { source: source === "" ? "(?:)" : source, flags: fold ? "iu" : "u" };
}

/**
 * The names of an RE2 pattern's named groups, in order, from a real parse (a
 * `(?P<x>…)` inside `\Q…\E` or a character class is no group). Throws
 * Re2Error as compileRe2 does.
 */
export function re2GroupNames(pattern: string): string[] {
  const parser = new Parser(pattern);
  parser.parse();
  return [...parser.names];
}

/** Why RE2 refuses a pattern, as a sentence for an API error, or undefined. */
export function re2Problem(pattern: string): string | undefined {
  try {
    compileRe2(pattern);
    return undefined;
  } catch (error) {
    if (error instanceof Re2Error) return `is not an RE2 pattern: ${error.reason} (at ${error.offset})`;
    throw error;
  }
}

const CACHE_LIMIT = 1000;
const cache = new BoundedMap<string, RegExp>(CACHE_LIMIT);

/**
 * A compiled RegExp for an RE2 pattern, built once per pattern text.
 * Throws Re2Error for a pattern RE2 rejects or that has no exact JS equivalent.
 */
export function compileRe2(pattern: string): RegExp {
  let regex = cache.get(pattern);
  if (regex) return regex;
  const { source, flags } = translateRe2(pattern);
  try {
    regex = new RegExp(source, flags);
  } catch (error) {
    throw new Re2Error(0, `the pattern cannot be compiled: ${(error as Error).message}`);
  }
  cache.set(pattern, regex);
  return regex;
}
