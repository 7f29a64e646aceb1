/**
 * Grafana Alloy configuration syntax (Runtime R): a small model of blocks,
 * attributes and values, and its text form in the layout `alloy fmt` writes
 * (tab indentation, `=` aligned across consecutive attributes). Catalog types
 * build blocks with these helpers; the renderer wires and encodes them, so
 * the model lives in the catalog, which render/ builds on.
 */
import { hasReferenceStart } from "../../shared/attribute-refs.ts";
import { HostEnvValue } from "./host-env.ts";

/** A reference to another component's export, e.g. `otelcol.exporter.otlp.default.input`. */
export class AlloyRef {
  constructor(readonly expression: string) {}
}

/** A string written as a backtick raw string when it can be, so OTTL stays readable. */
export class AlloyRawString {
  constructor(readonly text: string) {}
}

export type AlloyValue =
  | string
  | HostEnvValue
  | number
  | boolean
  | null
  | AlloyRef
  | AlloyRawString
  | readonly AlloyValue[]
  | { readonly [key: string]: AlloyValue };

export interface AlloyAttribute {
  readonly kind: "attribute";
  readonly name: string;
  readonly value: AlloyValue;
}

export interface AlloyBlock {
  readonly kind: "block";
  /** Block name, e.g. `otelcol.receiver.otlp` or `output`. */
  readonly name: string;
  /** Component label; must be an Alloy identifier. Nested blocks have none. */
  readonly label?: string;
  readonly body: readonly AlloyStatement[];
  /** Lines written as `//` comments above the block. */
  readonly comments?: readonly string[];
}

export type AlloyStatement = AlloyAttribute | AlloyBlock;

/** Optional statements may be given as `false` or `undefined` and are left out. */
type MaybeStatement = AlloyStatement | false | undefined;

export function attr(name: string, value: AlloyValue): AlloyAttribute {
  return { kind: "attribute", name, value };
}

export function block(name: string, label: string | undefined, body: readonly MaybeStatement[]): AlloyBlock {
  const statements = body.filter((s): s is AlloyStatement => s !== false && s !== undefined);
  return label === undefined ? { kind: "block", name, body: statements } : { kind: "block", name, label, body: statements };
}

export function ref(expression: string): AlloyRef {
  return new AlloyRef(expression);
}

export function raw(text: string): AlloyRawString {
  return new AlloyRawString(text);
}

/** Returns `b` with comment lines to be written above it. */
export function withComments(b: AlloyBlock, comments: readonly string[]): AlloyBlock {
  return comments.length === 0 ? b : { ...b, comments: [...(b.comments ?? []), ...comments] };
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const KEYWORDS = new Set(["true", "false", "null"]);

export function isAlloyIdentifier(text: string): boolean {
  return IDENTIFIER.test(text) && !KEYWORDS.has(text);
}

/**
 * A quoted Alloy string. Alloy unquotes like Go, so JSON's escapes (`\"`,
 * `\\`, `\n`, `\uXXXX`) are all valid; lone surrogates become U+FFFD first.
 */
export function quoteAlloy(text: string): string {
  return JSON.stringify(text.toWellFormed());
}

/** Inline lists and objects longer than this are written one element per line. */
const INLINE_LIMIT = 72;

/** The whole file: top-level blocks separated by blank lines, after optional header comments. */
export function encodeAlloy(blocks: readonly AlloyBlock[], header: readonly string[] = []): string {
  const parts: string[] = [];
  if (header.length > 0) parts.push(header.map((line) => comment(line, "")).join("\n"));
  for (const b of blocks) parts.push(encodeBlock(b, "").join("\n"));
  return parts.length === 0 ? "" : `${parts.join("\n\n")}\n`;
}

function comment(line: string, indent: string): string {
  return line === "" ? `${indent}//` : `${indent}// ${line}`;
}

function encodeBlock(b: AlloyBlock, indent: string): string[] {
  if (b.label !== undefined && !isAlloyIdentifier(b.label)) {
    throw new Error(`Alloy block label '${b.label}' is not an identifier.`);
  }
  const lines = (b.comments ?? []).map((line) => comment(line, indent));
  const header = b.label === undefined ? b.name : `${b.name} ${quoteAlloy(b.label)}`;
  if (b.body.length === 0) return [...lines, `${indent}${header} {}`];
  lines.push(`${indent}${header} {`);
  lines.push(...encodeBody(b.body, `${indent}\t`));
  lines.push(`${indent}}`);
  return lines;
}

/** Attributes in a run share one `=` column; a blank line sets blocks apart. */
function encodeBody(body: readonly AlloyStatement[], indent: string): string[] {
  const lines: string[] = [];
  let i = 0;
  while (i < body.length) {
    const statement = body[i]!;
    if (i > 0) lines.push("");
    if (statement.kind === "block") {
      lines.push(...encodeBlock(statement, indent));
      i += 1;
      continue;
    }
    let end = i;
    while (end < body.length && body[end]!.kind === "attribute") end += 1;
    const run = body.slice(i, end) as AlloyAttribute[];
    const width = Math.max(...run.map((a) => a.name.length));
    for (const a of run) {
      const value = encodeValue(a.value, indent);
      lines.push(`${indent}${a.name.padEnd(width)} = ${value}`);
    }
    i = end;
  }
  return lines;
}

function encodeValue(value: AlloyValue, indent: string): string {
  if (value === null) return "null";
  if (typeof value === "string") return quoteAlloy(value);
  if (typeof value === "boolean") return String(value);
  if (typeof value === "number") {
    // Alloy's scanner takes `1e+21` and `1.5e-7` as floats (strconv.ParseFloat), but a whole number
    // beyond 2^53 has already lost digits here: the catalog refuses such values before rendering.
    if (!Number.isFinite(value) || (Number.isInteger(value) && !Number.isSafeInteger(value))) {
      throw new Error(`Alloy has no exact literal for ${value}.`);
    }
    return String(value);
  }
  if (value instanceof AlloyRef) return value.expression;
  if (value instanceof HostEnvValue) return `sys.env(${quoteAlloy(value.name)})`;
  if (value instanceof AlloyRawString) {
    // An attribute reference is filled in quoted (attributes.ts), which a raw string cannot hold.
    return /[`\u0000-\u001f\u007f]/.test(value.text) || hasReferenceStart(value.text) ? quoteAlloy(value.text) : `\`${value.text}\``;
  }
  if (isList(value)) {
    const items = value.map((item) => encodeValue(item, `${indent}\t`));
    return wrap("[", "]", items, indent);
  }
  const keys = Object.keys(value).sort();
  const values = keys.map((key) => encodeValue(value[key]!, `${indent}\t`));
  const inline = keys.map((key, i) => `${quoteAlloy(key)} = ${values[i]}`);
  const width = Math.max(0, ...keys.map((key) => quoteAlloy(key).length));
  const aligned = keys.map((key, i) => `${quoteAlloy(key).padEnd(width)} = ${values[i]}`);
  return wrap("{", "}", inline, indent, aligned);
}

function isList(value: AlloyValue): value is readonly AlloyValue[] {
  return Array.isArray(value);
}

/** One line when short, else one item per line with a trailing comma (`multiline` items, when given, for that form). */
function wrap(open: string, close: string, items: string[], indent: string, multiline = items): string {
  if (items.length === 0) return `${open}${close}`;
  const inline = `${open}${items.join(", ")}${close}`;
  if (inline.length <= INLINE_LIMIT && !inline.includes("\n")) return inline;
  return `${open}\n${multiline.map((item) => `${indent}\t${item},`).join("\n")}\n${indent}${close}`;
}
