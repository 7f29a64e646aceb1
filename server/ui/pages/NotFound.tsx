/** An unknown /ui/ path: the server sent index.html, so the client says so and offers the way back. */
import { Link } from "../router.tsx";

export function NotFoundPage({ path }: { path: string }) {
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Page not found</h1>
      <div className="empty-state">
        <p>
          Nothing is at <code>{path}</code>. The link may be old, or the record it named was deleted.
        </p>
        <div className="empty-actions">
          <Link href="/ui/" className="button primary">
            Go to the start page
          </Link>
        </div>
      </div>
    </section>
  );
}
