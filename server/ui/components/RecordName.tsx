/**
 * A record named for people: "Source “nginx logs”" linking to where it is
 * edited, instead of its UUID. Pending changes, commit diffs and the audit
 * page use it; a record that is gone keeps its id, marked "(deleted)".
 */
import { Link } from "../router.tsx";
import "./RecordName.css";

/** The record kinds this names: the config repository's and the audit log's. */
export type NamedKind = "source" | "destination" | "pipeline" | "route" | "collector" | "user" | "service_account";

const WORDS: Record<NamedKind, string> = {
  source: "Source",
  destination: "Destination",
  pipeline: "Pipeline",
  route: "Route",
  collector: "Collector",
  user: "User",
  service_account: "Service account",
};

/** Where a record is shown or edited in the UI. */
export function recordHref(kind: NamedKind, id: string): string {
  const at = encodeURIComponent(id);
  switch (kind) {
    case "source":
      return `/ui/sources?edit=${at}`;
    case "destination":
      return `/ui/destinations?edit=${at}`;
    case "pipeline":
      return `/ui/pipelines/${at}`;
    case "route":
      return `/ui/routes?edit=${at}`;
    case "collector":
      return `/ui/collectors/${at}`;
    case "user":
      return "/ui/users";
    case "service_account":
      return "/ui/service-accounts";
  }
}

export function isNamedKind(kind: string): kind is NamedKind {
  return kind in WORDS;
}

/**
 * "Source “nginx logs”" as a link to the record. Without a name it shows the
 * id; a deleted record, or one that `link` says is not there to open (a file
 * a pending change deletes), is not linked.
 */
export function RecordName({
  kind,
  id,
  name,
  deleted = false,
  link = true,
  suffix,
}: {
  kind: NamedKind;
  id: string;
  name: string | null;
  deleted?: boolean;
  link?: boolean;
  suffix?: string;
}) {
  const word = WORDS[kind];
  const label = name === null ? <code className="id">{id}</code> : <span className="name">“{name}”</span>;
  return (
    <span className="record-name">
      {word}{" "}
      {deleted || name === null || !link ? (
        label
      ) : (
        <Link href={recordHref(kind, id)} title={id}>
          “{name}”
        </Link>
      )}
      {suffix && ` ${suffix}`}
      {deleted && (
        <>
          {name !== null && (
            <>
              {" "}
              <code className="id muted">{id}</code>
            </>
          )}
          <span className="muted"> (deleted)</span>
        </>
      )}
    </span>
  );
}
