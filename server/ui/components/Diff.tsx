/**
 * A text diff as a table, unified or side by side: pending changes arrive as
 * a unified patch (parsePatch) and config versions as two texts
 * (textPatch), and both read the same here. Every changed line carries its
 * + or − sign as text, so the change does not depend on seeing colour.
 */
import { useId, useState } from "react";
import { structuredPatch, type StructuredPatch, type StructuredPatchHunk } from "diff";
import "./Diff.css";

export type { StructuredPatch };

/** The patch turning `before` into `after`, with three lines of context. */
export function textPatch(before: string, after: string, beforeName: string, afterName: string): StructuredPatch {
  return structuredPatch(beforeName, afterName, before, after, undefined, undefined, { context: 3 });
}

type Mode = "unified" | "split";

interface Line {
  sign: "+" | "-" | " ";
  text: string;
  oldNo: number | null;
  newNo: number | null;
}

function hunkLines(hunk: StructuredPatchHunk): Line[] {
  let oldNo = hunk.oldStart;
  let newNo = hunk.newStart;
  const lines: Line[] = [];
  for (const raw of hunk.lines) {
    const sign = raw[0];
    if (sign === "\\") continue; // "\ No newline at end of file"
    const text = raw.slice(1);
    if (sign === "+") lines.push({ sign, text, oldNo: null, newNo: newNo++ });
    else if (sign === "-") lines.push({ sign, text, oldNo: oldNo++, newNo: null });
    else lines.push({ sign: " ", text, oldNo: oldNo++, newNo: newNo++ });
  }
  return lines;
}

/** Side by side: each run of removals faces the run of additions after it. */
function splitRows(lines: Line[]): [Line | null, Line | null][] {
  const rows: [Line | null, Line | null][] = [];
  for (let i = 0; i < lines.length; ) {
    if (lines[i]!.sign === " ") {
      rows.push([lines[i]!, lines[i]!]);
      i++;
      continue;
    }
    const removed: Line[] = [];
    const added: Line[] = [];
    while (i < lines.length && lines[i]!.sign === "-") removed.push(lines[i++]!);
    while (i < lines.length && lines[i]!.sign === "+") added.push(lines[i++]!);
    for (let k = 0; k < Math.max(removed.length, added.length); k++) rows.push([removed[k] ?? null, added[k] ?? null]);
  }
  return rows;
}

/**
 * A line naming a secret's version: a record's `secret: <id>` in the tree, or
 * a rendered config's `"<secret:<id>>"`. The id changes with the value, so an
 * added one says the secret changed; its value is never anywhere to show.
 */
const SECRET_LINE = /(?:^\s*secret: [0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\s*$)|"<secret:[0-9a-f-]{36}>"/;

const CLASS = { "+": "diff-add", "-": "diff-del", " ": "diff-ctx" } as const;
const SIGN = { "+": "+", "-": "−", " ": "" } as const;

function Cells({ line, side }: { line: Line | null; side: "old" | "new" }) {
  if (line === null) return <td className="diff-empty" colSpan={2} />;
  const no = side === "old" ? line.oldNo : line.newNo;
  return (
    <>
      <td className="diff-no">{no}</td>
      <td className={`diff-text ${CLASS[line.sign]}`}>
        <span className="diff-sign">{SIGN[line.sign]}</span>
        {line.text}
        {line.sign === "+" && SECRET_LINE.test(line.text) && <span className="diff-note"> secret changed (values are never shown)</span>}
      </td>
    </>
  );
}

export function Diff({ patch, label }: { patch: StructuredPatch; label: string }) {
  const [mode, setMode] = useState<Mode>("unified");
  const name = useId();
  const hunks = patch.hunks.map(hunkLines);
  const added = hunks.flat().filter((l) => l.sign === "+").length;
  const removed = hunks.flat().filter((l) => l.sign === "-").length;
  return (
    <div className="diff">
      <div className="diff-head">
        <span className="diff-stats">
          <span className="diff-count-add">+{added}</span> <span className="diff-count-del">−{removed}</span>
          <span className="visually-hidden">
            {" "}
            ({added} line{added === 1 ? "" : "s"} added, {removed} removed)
          </span>
        </span>
        <fieldset className="diff-mode">
          <legend className="visually-hidden">{label}: view</legend>
          {(["unified", "split"] as const).map((m) => (
            <label key={m}>
              <input type="radio" name={name} value={m} checked={mode === m} onChange={() => setMode(m)} />
              {m === "unified" ? "Unified" : "Side by side"}
            </label>
          ))}
        </fieldset>
      </div>
      {hunks.length === 0 ? (
        <p className="muted">No differences.</p>
      ) : (
        <div className="diff-scroll" role="region" aria-label={label} tabIndex={0}>
          <table className={`diff-table diff-${mode}`}>
            <tbody>
              {hunks.map((lines, h) => {
                const hunk = patch.hunks[h]!;
                const header = `@@ −${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`;
                return [
                  <tr key={`h${h}`} className="diff-hunk">
                    <td colSpan={mode === "unified" ? 3 : 4}>{header}</td>
                  </tr>,
                  ...(mode === "unified"
                    ? lines.map((line, i) => (
                        <tr key={`${h}-${i}`}>
                          <td className="diff-no">{line.oldNo}</td>
                          <Cells line={line} side="new" />
                        </tr>
                      ))
                    : splitRows(lines).map(([left, right], i) => (
                        <tr key={`${h}-${i}`}>
                          <Cells line={left} side="old" />
                          <Cells line={right} side="new" />
                        </tr>
                      ))),
                ];
              })}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
