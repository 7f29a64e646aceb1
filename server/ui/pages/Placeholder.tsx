/** Stands in for a page that a later change builds, so the navigation is complete now. */
export function PlaceholderPage({ title }: { title: string }) {
  return (
    <section aria-labelledby="page-title">
      <h1 id="page-title">{title}</h1>
      <p className="muted">This page is not built yet.</p>
    </section>
  );
}
