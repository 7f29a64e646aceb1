/** An unknown /ui/ path: the server sent index.html, so the client says so. */
import { Link } from "../router.tsx";

export function NotFoundPage({ path }: { path: string }) {
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">Page not found</h1>
      <p>
        Nothing is at <code>{path}</code>. <Link href="/ui/">Go to the start page</Link>.
      </p>
    </section>
  );
}
