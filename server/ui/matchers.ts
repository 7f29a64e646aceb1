/**
 * Matchers as the UI writes them (shared/matchers.ts parses them, as the API
 * does): what is wrong with one as it is typed, and matchers that select an
 * explicit set of collectors by id, for the bulk tag edit of a selection.
 */
import { MAX_MATCHER_PROGRAM, Matcher, MatcherSyntaxError, parseMatcher, programBound } from "../../shared/matchers.ts";

/** The API's longest matcher (server/api/collectors.ts MATCHER_MAX). */
export const MATCHER_MAX = 1024;

/** Why `text` is not one matcher, with its 1-based column; null when it is one. */
export function matcherProblem(text: string): { column: number; message: string } | null {
  try {
    parseMatcher(text);
    return null;
  } catch (error) {
    if (!(error instanceof MatcherSyntaxError)) throw error;
    return { column: error.column, message: `column ${error.column}: ${error.reason}` };
  }
}

/** An RE2 pattern matching `text` literally (RE2's QuoteMeta: every punctuation rune it treats specially). */
function quoteMeta(text: string): string {
  return text.replace(/[\\.+*?()|[\]{}^$]/g, "\\$&");
}

/** How long `value` is once Matcher.toString quotes it: `\`, `"` and newline gain a backslash. */
function quotedLength(value: string): number {
  let length = value.length + 2;
  for (const c of value) if (c === "\\" || c === '"' || c === "\n") length++;
  return length;
}

const PREFIX = "collector.id=~";

/** One matcher of a selection and the ids it selects. */
export interface SelectionChunk {
  match: string;
  ids: string[];
}

/**
 * Matchers `collector.id=~"id1|id2|…"`, each at most `max` characters and
 * within the API's RE2 program cap (MAX_MATCHER_PROGRAM), that together
 * select exactly `ids`: the API edits tags by matchers, and one call per
 * matcher edits a selection of any size.
 */
export function selectionMatchers(ids: readonly string[], max = MATCHER_MAX): SelectionChunk[] {
  const empty = PREFIX.length + 2;
  // The anchors' ^(?:…)$ and the program's own instructions.
  const emptyProgram = programBound("^(?:)$");
  const out: SelectionChunk[] = [];
  let chunk: string[] = [];
  let patterns: string[] = [];
  let length = empty;
  let program = emptyProgram;
  const flush = () => {
    out.push({ match: String(new Matcher("collector.id", "=~", patterns.join("|"))), ids: chunk });
    chunk = [];
    patterns = [];
    length = empty;
    program = emptyProgram;
  };
  for (const id of ids) {
    const pattern = quoteMeta(id);
    const cost = quotedLength(pattern) - 2;
    // Its instructions and the alternation's one: programBound of the pattern alone, less the program's own two.
    const size = programBound(pattern) - 2 + 1;
    if (empty + cost > max || emptyProgram + size > MAX_MATCHER_PROGRAM) throw new RangeError(`collector id ${JSON.stringify(id)} is too long for a matcher`);
    if (chunk.length > 0 && (length + 1 + cost > max || program + size > MAX_MATCHER_PROGRAM)) flush();
    length += (chunk.length > 0 ? 1 : 0) + cost;
    program += size;
    chunk.push(id);
    patterns.push(pattern);
  }
  if (chunk.length > 0) flush();
  return out;
}
