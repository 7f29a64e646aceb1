/**
 * The commit history on the Changes page: newest first, each commit opening
 * its files and diff against its parent (GET /commits/{commit}), and the
 * whole history downloadable as a git bundle (GET /commits/export). A link
 * with ?commit=<id> (the audit page's, for a commit entry) opens that commit.
 */
import { useEffect, useState } from "react";
import type { Commit } from "../../../shared/changes.ts";
import { api, apiUrl } from "../client.ts";
import { useLoad } from "../load.ts";
import { shortCommit } from "../format.ts";
import { ChangedFiles, parseDiff } from "../components/ChangedFiles.tsx";
import { ErrorMessage } from "../components/ErrorMessage.tsx";
import { LastSeen } from "../components/LastSeen.tsx";
import { LoadMore } from "../components/LoadMore.tsx";
import { ListTable } from "../components/ListTable.tsx";
import { usePages } from "../list.ts";
import { useLocation } from "../router.tsx";

const COMMITS_PAGE = 50;

export function CommitHistory({ reload }: { reload: number }) {
  const { search } = useLocation();
  const linked = search.get("commit");
  const [open, setOpen] = useState<string | null>(linked);
  const { items, nextCursor, error, loading, loadMore } = usePages("/commits", (cursor) => ({ limit: COMMITS_PAGE, cursor }), String(reload));
  const toggle = (commit: string) => setOpen((current) => (current === commit ? null : commit));

  return (
    <section className="detail-block" aria-labelledby="commits-title">
      <div className="page-head history-head">
        <h2 id="commits-title">Commit history</h2>
        {items.length > 0 && (
          // A plain link: the browser downloads with the session cookie, as the API names the file.
          <a className="button" href={apiUrl("/commits/export")} download>
            Download history (git bundle)
          </a>
        )}
      </div>
      <ErrorMessage error={error} />
      <p className="muted" aria-live="polite">
        {loading && items.length === 0 ? "Loading…" : items.length === 0 && !error ? "No commits yet." : ""}
      </p>
      {items.length > 0 && (
        <ListTable caption={{ id: "commits-caption", text: "Commits, newest first" }} className="commit-list" columns={["Message", "Author", "Time", "Commit"]}>
          {items.map((c) => (
            <CommitRow key={c.commit} commit={c} open={open === c.commit} reveal={linked === c.commit} onToggle={() => toggle(c.commit)} />
          ))}
        </ListTable>
      )}
      <LoadMore nextCursor={nextCursor} loading={loading} onLoad={loadMore} />
    </section>
  );
}

function CommitRow({ commit: c, open, reveal, onToggle }: { commit: Commit; open: boolean; reveal: boolean; onToggle: () => void }) {
  const diffId = `commit-diff-${c.commit}`;
  // A commit a link opened sits far down the page: bring it into view once.
  useEffect(() => {
    if (reveal) document.getElementById(diffId)?.scrollIntoView({ block: "start" });
  }, [reveal, diffId]);
  return (
    <>
      <tr className={open ? "commit-open" : undefined}>
        <th scope="row" className="commit-message">
          <button type="button" className="linklike" aria-expanded={open} aria-controls={open ? diffId : undefined} onClick={onToggle}>
            {c.message}
          </button>
        </th>
        <td>{c.author}</td>
        <td>
          <LastSeen at={c.time} />
        </td>
        <td>
          <code title={c.commit}>{shortCommit(c.commit)}</code>
        </td>
      </tr>
      {open && (
        <tr id={diffId} className="commit-diff-row">
          <td colSpan={4}>
            <CommitFiles commit={c.commit} />
          </td>
        </tr>
      )}
    </>
  );
}

/** One commit's changed files and their diff, loaded when it is opened. */
function CommitFiles({ commit }: { commit: string }) {
  const { data: answer, error } = useLoad(() => api.get("/commits/{commit}", { params: { commit } }), commit);
  if (error) return <ErrorMessage error={error} />;
  if (!answer) return <p className="muted">Loading…</p>;
  const count = answer.items.length;
  return (
    <div className="commit-files">
      <p className="muted">
        {count} changed file{count === 1 ? "" : "s"}{" "}
        {answer.parent ? <>against {<code title={answer.parent}>{shortCommit(answer.parent)}</code>}</> : "(the first commit)"}
      </p>
      <ChangedFiles items={answer.items} patches={parseDiff(answer.diff)} label={`Files changed by ${shortCommit(commit)}`} />
    </div>
  );
}
