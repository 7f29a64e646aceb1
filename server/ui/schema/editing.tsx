/**
 * What the configuration pages (sources, destinations, routes) share around
 * their forms: whether the signed-in user may write (viewers get read-only
 * pages), and the note that an edit is pending until committed.
 */
import { ROLES, type Scope } from "../../../shared/access.ts";
import { Link } from "../router.tsx";
import { useSession } from "../session.tsx";

/** Editors and admins write; viewers, and a session the UI could not read, only look. */
export function useCanWrite(): boolean {
  const { state } = useSession();
  return state.status === "signedIn" && state.user.role !== "viewer";
}

/**
 * Whether the signed-in user's role holds `scope`: minting a collector's credential
 * (collectors:enroll) is for admins, so editors are not offered buttons that answer 403.
 */
export function useHasScope(scope: Scope): boolean {
  const { state } = useSession();
  return state.status === "signedIn" && (ROLES[state.user.role] as readonly Scope[]).includes(scope);
}

export function PendingChangesNote() {
  return (
    <p className="note" role="note">
      Edits here change the working tree: they land in <Link href="/ui/changes">pending changes</Link>, and reach collectors once committed and published.
    </p>
  );
}
