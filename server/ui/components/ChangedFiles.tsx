/**
 * The files a change touches, each named by the record it holds ("Source
 * “nginx logs”", linked) with its path beside it, opening to its diff. Used
 * for pending changes and for one commit of the history.
 */
import { parsePatch } from "diff";
import type { FileChange } from "../../../shared/changes.ts";
import { Diff, type StructuredPatch } from "./Diff.tsx";
import { RecordName } from "./RecordName.tsx";

const CHANGE_WORDS: Record<FileChange["change"], string> = { added: "added", modified: "modified", deleted: "deleted" };

/** The unified diff the API answers, one patch per file. */
export function parseDiff(diff: string): StructuredPatch[] {
  return diff === "" ? [] : parsePatch(diff);
}

/** What a file holds, in words: its record by name, else its path. */
function FileTitle({ item }: { item: FileChange }) {
  const record = item.record;
  if (!record) return <code>{item.path}</code>;
  return (
    <>
      <RecordName
        kind={record.kind}
        id={record.id}
        name={record.name}
        // A collector without a name is gone; a file the change deletes has no record left to open.
        deleted={record.kind === "collector" && record.name === null}
        link={item.change !== "deleted"}
        suffix={record.kind === "collector" ? "activations" : undefined}
      />{" "}
      <code className="id muted">{item.path}</code>
    </>
  );
}

export function ChangedFiles({ items, patches, label, openUpTo = 5 }: { items: FileChange[]; patches: StructuredPatch[]; label: string; openUpTo?: number }) {
  /** The patch of one file: the server writes one per item, in order, named a/<path> or b/<path>. */
  const patchOf = (item: FileChange, index: number) =>
    patches.find((p) => p.oldFileName === `a/${item.path}` || p.newFileName === `b/${item.path}`) ?? patches[index];
  return (
    <ul className="plain pending-files" aria-label={label}>
      {items.map((item, i) => {
        const patch = patchOf(item, i);
        return (
          <li key={item.path}>
            <details open={items.length <= openUpTo}>
              <summary>
                <FileTitle item={item} /> <span className={`change change-${item.change}`}>{CHANGE_WORDS[item.change]}</span>
              </summary>
              {patch ? <Diff patch={patch} label={`Diff of ${item.path}`} /> : <p className="muted">No diff.</p>}
            </details>
          </li>
        );
      })}
    </ul>
  );
}
