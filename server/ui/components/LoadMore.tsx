/** The "Load more" button under a cursor-paged list; absent once the last page is in. */
export function LoadMore({ nextCursor, loading, onLoad }: { nextCursor: string | null; loading: boolean; onLoad: () => void }) {
  if (nextCursor === null) return null;
  return (
    <p>
      <button type="button" className="button" onClick={onLoad} disabled={loading}>
        {loading ? "Loading…" : "Load more"}
      </button>
    </p>
  );
}
