/**
 * The OTTL condition grammar (the `where` part of a statement, which is what
 * the filter processor takes), with the collector's precedence: comparisons
 * bind tightest, then `not`, `and`, `or`. Paths, enums and converters are
 * checked against the context, and IsMatch patterns against RE2, so a
 * condition that parses here also loads in the collector. Anything else is
 * an OttlError with the 1-based column; no other exception escapes.
 */
import type { Call, CompareOp, Condition, Key, Statement, StringList, Value } from "./ast.ts";
import { ENUMS, FUNCTIONS, PATHS, type OttlContext, type StatementContext } from "./contexts.ts";
import { EDITORS, type EditorArg } from "./editors.ts";
import { OttlError } from "./errors.ts";
import { formatValue } from "./format.ts";
import { globProblem } from "./glob.ts";
import { sourceIndex, tokenize, type Token } from "./lexer.ts";
import { compileRe2, Re2Error } from "./regex.ts";

/** Parentheses and calls nest at most this deep; real conditions use a handful. */
const MAX_NESTING = 100;
const KEYWORDS = new Set(["and", "or", "not", "true", "false", "nil"]);
const FUNCTION_LIST = Object.keys(FUNCTIONS).join(", ");
const EDITOR_LIST = Object.keys(EDITORS).join(", ");

export function parseCondition(source: string, context: OttlContext = "log"): Condition {
  return new Parser(source, context).parse();
}

/**
 * The problem with a condition as "column N: what is wrong", or null when it
 * parses. Fits the catalog's `setOttlConditionCheck`.
 */
export function checkCondition(source: string, context: OttlContext): string | null {
  try {
    parseCondition(source, context);
    return null;
  } catch (error) {
    if (error instanceof OttlError) return error.details[0]!.message;
    throw error;
  }
}

/**
 * A transform statement, `editor(arguments) where condition`, in one of the statement
 * contexts: the editor and each argument checked against editors.ts, the condition as
 * parseCondition checks it.
 */
export function parseStatement(source: string, context: StatementContext): Statement {
  return new Parser(source, context).statement();
}

/** The problem with a statement as "column N: what is wrong", or null when it parses. */
export function checkStatement(source: string, context: StatementContext): string | null {
  try {
    parseStatement(source, context);
    return null;
  } catch (error) {
    if (error instanceof OttlError) return error.details[0]!.message;
    throw error;
  }
}

class Parser {
  private readonly tokens: Token[];
  private pos = 0;
  private depth = 0;
  /** Inside call arguments, where `name = value` would be a named argument. */
  private inArguments = 0;
  /** An editor's argument, where a whole map (`attributes`) is a value. */
  private wholeMaps = false;

  constructor(
    private readonly source: string,
    private readonly context: StatementContext,
  ) {
    this.tokens = tokenize(source);
  }

  parse(): Condition {
    if (this.peek().kind === "eof") this.fail("the condition is empty", this.peek());
    const condition = this.parseOr();
    if (this.peek().kind !== "eof") {
      if (this.isPunct(")")) this.fail("')' has no matching '('");
      this.unexpected("'and', 'or' or the end of the condition");
    }
    return condition;
  }

  statement(): Statement {
    const name = this.peek();
    if (name.kind === "eof") this.fail("the statement is empty", name);
    if (name.kind !== "ident" || this.peekNext()?.kind !== "punct" || this.peekNext()!.text !== "(") {
      this.unexpected("an editor call such as set(...)");
    }
    const params = EDITORS[name.text];
    if (!params) this.fail(`'${name.text}' is not an editor svc checks; statements can call ${EDITOR_LIST}`, name);
    this.advance();
    this.nest(name);
    this.advance();
    const args: (Value | StringList)[] = [];
    const starts: Token[] = [];
    this.inArguments++;
    if (!this.isPunct(")")) {
      while (true) {
        const param = params[args.length];
        if (!param) this.fail(`${name.text} takes ${params.length} arguments (${params.map(([n]) => n).join(", ")}); optional ones are not supported`);
        starts.push(this.peek());
        args.push(this.editorArg(name.text, param[0], param[1]));
        if (!this.isPunct(",")) break;
        this.advance();
      }
    }
    this.inArguments--;
    this.expectPunct(")");
    this.depth--;
    if (args.length !== params.length) {
      this.fail(`${name.text} takes ${params.length} arguments (${params.map(([n]) => n).join(", ")}), got ${args.length}`, name);
    }
    if (name.text === "limit") {
      // func_limit.go refuses a limit below the number of priority keys when the statement is built.
      const limit = (args[1] as { value: bigint }).value;
      const keys = (args[2] as StringList).items.length;
      if (limit < BigInt(keys)) this.fail(`the limit of limit must be at least the number of priority_keys (${keys}), got ${limit}`, starts[1]);
    }
    let where: Condition | undefined;
    if (this.isKeyword("where")) {
      this.advance();
      if (this.peek().kind === "eof") this.fail("'where' needs a condition after it");
      where = this.parseOr();
    }
    if (this.peek().kind !== "eof") {
      if (this.isPunct(")")) this.fail("')' has no matching '('");
      this.unexpected(where ? "'and', 'or' or the end of the statement" : "'where' or the end of the statement");
    }
    return where ? { editor: name.text, args, where } : { editor: name.text, args };
  }

  private editorArg(editor: string, param: string, kind: EditorArg): Value | StringList {
    const t = this.peek();
    // A lexing problem (a bad escape, an unclosed string) is what is wrong here.
    if (t.kind === "error") this.fail(t.reason);
    const literal = (want: "string" | "int", what: string) => {
      if (t.kind !== want) this.fail(`the ${param} of ${editor} must be ${what}`, t);
      this.advance();
      return { kind: "literal" as const, value: t.value };
    };
    if (typeof kind === "object") {
      const value = literal("string", `one of ${kind.oneOf.map((v) => `"${v}"`).join(", ")}`);
      if (!kind.oneOf.includes(value.value as string)) this.fail(`the ${param} of ${editor} must be one of ${kind.oneOf.map((v) => `"${v}"`).join(", ")}`, t);
      return value;
    }
    switch (kind) {
      case "string":
        return literal("string", "a string");
      case "regex":
        this.checkPattern(t, `the ${param} of ${editor} must be a string literal`, "invalid pattern");
        return literal("string", "a string");
      case "glob": {
        const value = literal("string", "a string");
        const bad = globProblem(value.value as string);
        if (bad) throw new OttlError(`invalid glob pattern: ${bad.reason}`, sourceIndex(this.source, t.start, bad.offset) + 1);
        return value;
      }
      case "count": {
        const value = literal("int", "an integer");
        if ((value.value as bigint) < 0n) this.fail(`the ${param} of ${editor} must not be negative`, t);
        return value;
      }
      case "strings":
        return this.stringList(editor, param);
      case "value":
        return this.withWholeMaps(() => this.parseValue());
      case "target":
      case "map": {
        if (t.kind !== "ident" || KEYWORDS.has(t.text) || (t.text[0]! >= "A" && t.text[0]! <= "Z")) this.fail(`the ${param} of ${editor} must be a path`, t);
        const path = this.withWholeMaps(() => this.parsePath()) as Extract<Value, { kind: "path" }>;
        const rule = PATHS[this.context][path.fields.join(".")];
        if (kind === "map" && rule === "none") this.fail(`the ${param} of ${editor} must be a map, such as attributes; ${path.fields.join(".")} is not one`, t);
        return path;
      }
    }
  }

  private withWholeMaps<T>(fn: () => T): T {
    this.wholeMaps = true;
    try {
      return fn();
    } finally {
      this.wholeMaps = false;
    }
  }

  private stringList(editor: string, param: string): StringList {
    if (!this.isPunct("[")) this.fail(`the ${param} of ${editor} must be a list of strings, e.g. ["a", "b"]`);
    this.advance();
    const items: string[] = [];
    while (!this.isPunct("]")) {
      const t = this.peek();
      if (t.kind !== "string") this.unexpected("a string");
      items.push(t.value);
      this.advance();
      if (this.isPunct(",")) this.advance();
      else if (!this.isPunct("]")) this.unexpected("',' or ']'");
    }
    this.advance();
    return { kind: "list", items };
  }

  private peek(): Token {
    return this.tokens[this.pos]!;
  }

  private peekNext(): Token | undefined {
    return this.tokens[this.pos + 1];
  }

  private advance(): Token {
    const token = this.peek();
    if (token.kind !== "eof" && token.kind !== "error") this.pos++;
    return token;
  }

  private fail(reason: string, at: Token = this.peek()): never {
    throw new OttlError(reason, at.start + 1);
  }

  /** A lexing problem wins: it is what sits where the parser got stuck. */
  private unexpected(expected: string): never {
    const t = this.peek();
    if (t.kind === "error") this.fail(t.reason);
    const found = t.kind === "eof" ? "the end of the condition" : t.kind === "string" ? "a string" : `'${t.text}'`;
    this.fail(`expected ${expected}, found ${found}`);
  }

  private isPunct(text: string): boolean {
    return this.peek().kind === "punct" && this.peek().text === text;
  }

  private isKeyword(word: string): boolean {
    return this.peek().kind === "ident" && this.peek().text === word;
  }

  private expectPunct(text: string): void {
    if (!this.isPunct(text)) this.unexpected(`'${text}'`);
    this.advance();
  }

  private nest(at: Token): void {
    if (++this.depth > MAX_NESTING) this.fail(`parentheses and calls nest more than ${MAX_NESTING} deep`, at);
  }

  private parseOr(): Condition {
    const operands = [this.parseAnd()];
    while (this.isKeyword("or")) {
      this.advance();
      operands.push(this.parseAnd());
    }
    return operands.length === 1 ? operands[0]! : { kind: "or", operands };
  }

  private parseAnd(): Condition {
    const operands = [this.parseBoolean()];
    while (this.isKeyword("and")) {
      this.advance();
      operands.push(this.parseBoolean());
    }
    return operands.length === 1 ? operands[0]! : { kind: "and", operands };
  }

  /** OTTL allows one `not` per operand: `not not x` needs parentheses. */
  private parseBoolean(): Condition {
    if (!this.isKeyword("not")) return this.parsePrimary();
    this.advance();
    if (this.isKeyword("not")) this.fail("'not' cannot follow 'not'; write not (not ...)");
    return { kind: "not", operand: this.parsePrimary() };
  }

  private parsePrimary(): Condition {
    const start = this.peek();
    if (this.isPunct("(")) {
      this.nest(start);
      this.advance();
      const inner = this.parseOr();
      this.expectPunct(")");
      this.depth--;
      if (this.peek().kind === "op") this.fail("a parenthesized condition cannot be compared");
      return inner;
    }
    if (this.isKeyword("and") || this.isKeyword("or")) this.fail(`expected a condition before '${start.text}'`);
    const left = this.parseValue();
    if (this.peek().kind === "op") {
      const op = this.advance().text as CompareOp;
      const right = this.parseValue();
      if (this.peek().kind === "op") this.fail("comparisons cannot be chained; join them with 'and'");
      return { kind: "compare", op, left, right };
    }
    if (left.kind === "literal" && typeof left.value === "boolean") return { kind: "bool", value: left.value };
    if (left.kind === "call") return { kind: "call", call: left };
    const after = this.peek();
    if (after.kind === "error") this.fail(after.reason);
    const shown = formatValue(left);
    this.fail(
      left.kind === "path"
        ? `${shown} is not a condition by itself; compare it, e.g. ${shown} == "..." or ${shown} != nil`
        : `${shown} is not a condition; expected a comparison, true, false or a function call`,
      start,
    );
  }

  private parseValue(): Value {
    const t = this.peek();
    switch (t.kind) {
      case "string":
      case "int":
      case "float":
        this.advance();
        return { kind: "literal", value: t.value };
      case "ident":
        break;
      case "punct":
        if (t.text === "[") this.fail("list literals are not supported");
        return this.unexpected("a value");
      default:
        return this.unexpected("a value");
    }
    if (t.text === "true" || t.text === "false") {
      this.advance();
      return { kind: "literal", value: t.text === "true" };
    }
    if (t.text === "nil") {
      this.advance();
      return { kind: "literal", value: null };
    }
    if (KEYWORDS.has(t.text)) this.unexpected("a value");
    const isCall = this.peekNext()?.kind === "punct" && this.peekNext()!.text === "(";
    if (t.text[0]! >= "A" && t.text[0]! <= "Z") {
      if (isCall) return this.parseCall();
      if (t.text in FUNCTIONS) this.fail(`${t.text} is a function; call it: ${t.text}(...)`);
      if (!/^[A-Z][A-Z0-9_]*$/.test(t.text)) this.fail(`unknown name '${t.text}'`);
      if (!ENUMS[this.context].has(t.text)) this.fail(`unknown enum '${t.text}' in the ${this.context} context`);
      this.advance();
      return { kind: "enum", name: t.text };
    }
    const following = this.peekNext();
    if (this.inArguments > 0 && following?.kind === "error" && following.text === "=") {
      this.fail("named arguments are not supported; pass the arguments in order", following);
    }
    if (isCall) {
      const known = Object.keys(FUNCTIONS).find((f) => f.toLowerCase() === t.text.toLowerCase());
      this.fail(
        known
          ? `unknown function '${t.text}'; did you mean ${known}?`
          : `'${t.text}' is not a function a condition can call; conditions can call ${FUNCTION_LIST}`,
      );
    }
    return this.parsePath();
  }

  private parsePath(): Value {
    const start = this.peek();
    const fields = [this.advance().text];
    const keys: Key[] = [];
    let firstKey: Token | undefined;
    while (true) {
      if (this.isPunct(".")) {
        if (keys.length > 0) this.fail("a [key] must come last in a path");
        this.advance();
        if (this.peek().kind !== "ident" || KEYWORDS.has(this.peek().text)) this.unexpected("a field name after '.'");
        fields.push(this.advance().text);
      } else if (this.isPunct("[")) {
        firstKey ??= this.peek();
        this.advance();
        const k = this.peek();
        if (k.kind === "string" || k.kind === "int") keys.push(k.value);
        else this.unexpected("a string or int key");
        this.advance();
        this.expectPunct("]");
      } else {
        break;
      }
    }
    const name = fields.join(".");
    const rule = PATHS[this.context][name];
    if (rule === undefined) {
      const snake = name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
      const hint = PATHS[this.context][snake] !== undefined ? `; did you mean ${snake}?` : `; known paths: ${this.knownPaths()}`;
      this.fail(`unknown path '${name}' in the ${this.context} context${hint}`, start);
    }
    if (rule === "none" && firstKey) this.fail(`${name} takes no [key]`, firstKey);
    if (rule === "map" && keys.length === 0 && !this.wholeMaps) this.fail(`${name} needs a key, e.g. ${name}["key"]`, start);
    if (rule === "map" && keys.length > 0 && typeof keys[0] !== "string") this.fail(`${name} is indexed by a string key`, firstKey);
    return { kind: "path", fields, keys };
  }

  private knownPaths(): string {
    return Object.entries(PATHS[this.context])
      .map(([path, rule]) => (rule === "map" ? `${path}[...]` : path))
      .join(", ");
  }

  private parseCall(): Call {
    const nameToken = this.advance();
    const name = nameToken.text;
    this.nest(nameToken);
    this.advance();
    const args: Value[] = [];
    const starts: Token[] = [];
    this.inArguments++;
    if (!this.isPunct(")")) {
      while (true) {
        starts.push(this.peek());
        args.push(this.parseValue());
        if (!this.isPunct(",")) break;
        this.advance();
      }
    }
    this.inArguments--;
    this.expectPunct(")");
    this.depth--;
    const params = FUNCTIONS[name];
    if (!params) this.fail(`unknown function '${name}'; conditions can call ${FUNCTION_LIST}`, nameToken);
    if (args.length !== params.length) {
      const s = params.length === 1 ? "" : "s";
      this.fail(`${name} takes ${params.length} argument${s} (${params.join(", ")}), got ${args.length}`, nameToken);
    }
    if (name === "IsMatch") this.checkPattern(starts[1]!, "the pattern of IsMatch must be a string literal", "invalid IsMatch pattern");
    if (this.isPunct("[")) this.fail("indexing the result of a function is not supported");
    return { kind: "call", name, args };
  }

  private checkPattern(token: Token, notLiteral: string, invalid: string): void {
    if (token.kind !== "string") this.fail(notLiteral, token);
    try {
      compileRe2(token.value);
    } catch (error) {
      if (!(error instanceof Re2Error)) throw error;
      throw new OttlError(`${invalid}: ${error.reason}`, sourceIndex(this.source, token.start, error.offset) + 1);
    }
  }
}
