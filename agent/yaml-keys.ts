/**
 * Reading the agent's YAML input (its config file, fingerprints) key by key.
 * One parse under limits (size, alias expansion), then typed readers that
 * record every problem under its dotted key (`browse.maxDirEntries`,
 * `collectors[1].name`) and carry on, so a file reports all of its problems
 * at once. A null or blank value reads as unset everywhere.
 */
import { LineCounter, parseDocument } from "yaml";
import type { ConfigProblem } from "./types.ts";

/** Larger than any sane config; bounds the parser's work on a hostile file. */
export const MAX_YAML_BYTES = 1024 * 1024;

/** Aliases expanded per document: plenty for reuse, far too few for an alias bomb. */
const MAX_ALIASES = 100;

export type Mapping = Record<string, unknown>;

/** `prefix.name`, or `name` at the top level. */
export function child(prefix: string, name: string): string {
  return prefix === "" ? name : `${prefix}.${name}`;
}

/** The document as plain data; undefined after recording problems under `(yaml)`. */
export function parseYaml(text: string, problems: ConfigProblem[]): unknown {
  if (Buffer.byteLength(text) > MAX_YAML_BYTES) {
    problems.push({ key: "(yaml)", message: `the file is larger than ${MAX_YAML_BYTES} bytes` });
    return undefined;
  }
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length > 0) {
    for (const error of doc.errors) {
      const { line, col } = lineCounter.linePos(error.pos[0]);
      // The parser's first line ends in its own "at line L, column C:"; the position is given once, up front.
      const sentence = error.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "");
      problems.push({ key: "(yaml)", message: `line ${line}, column ${col}: ${sentence}` });
    }
    return undefined;
  }
  try {
    return doc.toJS({ maxAliasCount: MAX_ALIASES });
  } catch (error) {
    problems.push({ key: "(yaml)", message: `refused: ${(error as Error).message}` });
    return undefined;
  }
}

/** Null, absent or blank: the value is not set. */
export function isUnset(value: unknown): boolean {
  return value === undefined || value === null || (typeof value === "string" && value.trim() === "");
}

export function isMapping(value: unknown): value is Mapping {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Returns a problem sentence, or nothing when the value is fine. */
export type Check<T> = (value: T) => string | undefined;

/**
 * Typed reads that record a problem and return null (so the caller applies
 * its default and carries on) when a value is unset or wrong.
 */
export class KeyReader {
  readonly problems: ConfigProblem[] = [];

  problem(key: string, message: string): void {
    this.problems.push({ key, message });
  }

  /**
   * A mapping ({} when unset). With `known`, any other key is a problem named
   * by its full key, so a typo is never silently ignored.
   */
  mapping(value: unknown, key: string, known?: readonly string[]): Mapping {
    if (isUnset(value)) return {};
    if (!isMapping(value)) {
      this.problem(key === "" ? "(root)" : key, "must be a mapping of keys");
      return {};
    }
    if (known !== undefined) {
      for (const name of Object.keys(value)) {
        if (!known.includes(name)) this.problem(child(key, name), "unknown key");
      }
    }
    return value;
  }

  /** A trimmed string; blank reads as unset. */
  string(value: unknown, key: string, check?: Check<string>): string | null {
    if (isUnset(value)) return null;
    if (typeof value !== "string") {
      this.problem(key, "must be a string");
      return null;
    }
    return this.checked(value.trim(), key, check);
  }

  /** As `string`, but unset is a problem too; `hint` says what belongs there. */
  requiredString(value: unknown, key: string, hint: string, check?: Check<string>): string | null {
    if (isUnset(value)) {
      this.problem(key, `is required: ${hint}`);
      return null;
    }
    return this.string(value, key, check);
  }

  boolean(value: unknown, key: string): boolean | null {
    if (isUnset(value)) return null;
    if (typeof value !== "boolean") {
      this.problem(key, "must be true or false");
      return null;
    }
    return value;
  }

  integer(value: unknown, key: string, min: number, max: number): number | null {
    if (isUnset(value)) return null;
    if (typeof value !== "number" || !Number.isSafeInteger(value)) {
      this.problem(key, "must be a whole number");
      return null;
    }
    if (value < min || value > max) {
      this.problem(key, `must be between ${min} and ${max} (got ${value})`);
      return null;
    }
    return value;
  }

  /** A list; its items are the caller's to read, keyed `key[i]`. */
  list(value: unknown, key: string): unknown[] | null {
    if (isUnset(value)) return null;
    if (!Array.isArray(value)) {
      this.problem(key, "must be a list");
      return null;
    }
    return value;
  }

  /** A list of non-blank strings, each checked; a bad item is named `key[i]` and left out. */
  stringList(value: unknown, key: string, check?: Check<string>): string[] | null {
    return this.items(value, key, (item, itemKey) => this.string(item, itemKey, check));
  }

  /** A list of whole numbers in [min, max]; a bad item is named `key[i]` and left out. */
  integerList(value: unknown, key: string, min: number, max: number): number[] | null {
    return this.items(value, key, (item, itemKey) => this.integer(item, itemKey, min, max));
  }

  private items<T>(value: unknown, key: string, read: (item: unknown, itemKey: string) => T | null): T[] | null {
    const items = this.list(value, key);
    if (items === null) return null;
    return items.flatMap((item, i) => {
      const itemKey = `${key}[${i}]`;
      if (isUnset(item)) {
        this.problem(itemKey, "must not be empty");
        return [];
      }
      const parsed = read(item, itemKey);
      return parsed === null ? [] : [parsed];
    });
  }

  private checked(value: string, key: string, check: Check<string> | undefined): string | null {
    const problem = check?.(value);
    if (problem === undefined) return value;
    this.problem(key, problem);
    return null;
  }
}
