/** A collector by name, linked to its page; the id stays in the title for whoever needs it. */
import { Link } from "../router.tsx";

export function CollectorLink({ id, name }: { id: string; name: string | undefined }) {
  return (
    <Link href={`/ui/collectors/${encodeURIComponent(id)}`}>
      <span title={id}>{name ?? id}</span>
    </Link>
  );
}
