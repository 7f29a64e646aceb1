/**
 * The syntax tree of an OTTL condition. It holds no positions, so a printed
 * and re-parsed condition compares equal to the original.
 */

export type CompareOp = "==" | "!=" | "<" | ">" | "<=" | ">=";

/** Something that is true or false. `and`/`or` hold two or more operands. */
export type Condition =
  | { kind: "or"; operands: Condition[] }
  | { kind: "and"; operands: Condition[] }
  | { kind: "not"; operand: Condition }
  | { kind: "compare"; op: CompareOp; left: Value; right: Value }
  | { kind: "bool"; value: boolean }
  | { kind: "call"; call: Call };

/** A map key (`["k"]`) or a list index (`[0]`). */
export type Key = string | bigint;

/** `resource.attributes["k"]` is `{fields: ["resource", "attributes"], keys: ["k"]}`. */
export interface Path {
  kind: "path";
  fields: string[];
  keys: Key[];
}

/** Ints are bigint (OTTL ints are int64), floats are number. */
export interface Literal {
  kind: "literal";
  value: string | bigint | number | boolean | null;
}

export interface Enum {
  kind: "enum";
  name: string;
}

export interface Call {
  kind: "call";
  name: string;
  args: Value[];
}

export type Value = Path | Literal | Enum | Call;

/** A list literal of strings, as editors take (`keep_keys(attributes, ["a", "b"])`). */
export interface StringList {
  kind: "list";
  items: string[];
}

/** A transform statement: `editor(args) where condition`. */
export interface Statement {
  editor: string;
  args: (Value | StringList)[];
  where?: Condition;
}
