/**
 * A list of attribute matchers, one input per matcher, each checked as it is
 * typed with the parser the API uses (shared/matchers.ts): a syntax error is
 * shown under its row with its column, and the input is marked invalid. Rows
 * can be added and removed; a blank row counts for nothing. With `name`, each
 * input is a form field of that name (a GET form repeats it per matcher).
 * Read-only, the rows are shown without the buttons that change them.
 */
import { matcherProblem } from "../matchers.ts";
import "./MatcherFields.css";

interface MatcherFieldsProps {
  /** Prefix of the element ids (the page may hold two lists). */
  idPrefix: string;
  legend: string;
  values: string[];
  onChange: (values: string[]) => void;
  /** The form field name of each input. */
  name?: string;
  readOnly?: boolean;
  /** Messages the API gave for a row (`matchers[i]`), by index. */
  serverProblems?: ReadonlyMap<number, string>;
}

/** The matchers of a list that are not blank, trimmed. */
export function filledMatchers(values: readonly string[]): string[] {
  return values.map((v) => v.trim()).filter((v) => v !== "");
}

/** Whether every filled row parses. */
export function matchersValid(values: readonly string[]): boolean {
  return filledMatchers(values).every((v) => matcherProblem(v) === null);
}

export function MatcherFields({ idPrefix, legend, values, onChange, name, readOnly, serverProblems }: MatcherFieldsProps) {
  // Always one row to type in.
  const rows = values.length === 0 && !readOnly ? [""] : values;
  const set = (i: number, value: string) => onChange(rows.map((v, j) => (j === i ? value : v)));
  const hintId = `${idPrefix}-hint`;
  return (
    <fieldset className="matcher-fields">
      <legend>{legend}</legend>
      <p id={hintId} className="hint">
        One matcher per row, all must hold: <code>env=prod</code>, <code>team!=test</code>, <code>region=~"us-.*"</code>, <code>tier!~"dev|test"</code>{" "}
        (Alertmanager syntax; regular expressions are RE2 and match the whole value; an absent attribute reads as empty).
      </p>
      <ol className="matcher-rows">
        {rows.map((value, i) => {
          const problem = value.trim() === "" ? null : (matcherProblem(value.trim())?.message ?? serverProblems?.get(i) ?? null);
          const errorId = `${idPrefix}-${i}-error`;
          return (
            <li key={i} className="matcher-row">
              <input
                id={`${idPrefix}-${i}`}
                name={name}
                value={value}
                onChange={(event) => set(i, event.target.value)}
                readOnly={readOnly}
                aria-label={`Matcher ${i + 1}`}
                aria-invalid={problem !== null || undefined}
                aria-describedby={problem !== null ? `${errorId} ${hintId}` : hintId}
                placeholder="env=prod"
                spellCheck={false}
                autoComplete="off"
              />
              {!readOnly && (
                <button
                  type="button"
                  className="button ghost"
                  aria-label={`Remove matcher ${i + 1}`}
                  onClick={() => onChange(rows.filter((_, j) => j !== i))}
                  disabled={rows.length === 1 && value === ""}
                >
                  Remove
                </button>
              )}
              {problem !== null && (
                <span id={errorId} className="field-error">
                  {problem}
                </span>
              )}
            </li>
          );
        })}
      </ol>
      {!readOnly && (
        <button type="button" className="button" onClick={() => onChange([...rows, ""])}>
          Add matcher
        </button>
      )}
    </fieldset>
  );
}
