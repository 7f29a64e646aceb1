/**
 * The two ways OTTL fails. An OttlError is the author's mistake, found before
 * anything runs, so the HTTP edge answers 400 with the column. An
 * OttlEvalError is a record the condition cannot be evaluated on (indexing a
 * string, say); the filter's error_mode decides what that means, as in the
 * collector.
 */
import { ValidationError } from "../errors.ts";

export class OttlError extends ValidationError {
  /**
   * @param reason what is wrong, as a lower-case clause
   * @param column 1-based position in the condition text (UTF-16 units)
   * @param path the field that holds the condition, e.g. `processors[0].config.logs.log_record[1]`
   */
  constructor(
    readonly reason: string,
    readonly column: number,
    readonly path = "condition",
  ) {
    super(`${path}: column ${column}: ${reason}${/[.?!]$/.test(reason) ? "" : "."}`, [{ path, message: `column ${column}: ${reason}` }]);
  }

  /** The same error, reported against the field that holds the condition. */
  at(path: string): OttlError {
    return new OttlError(this.reason, this.column, path);
  }
}

export class OttlEvalError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "OttlEvalError";
  }
}
