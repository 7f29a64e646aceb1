/** A filter form's buttons: apply, and (while filters are set) clear them by going back to the page's bare path. */
import { navigate } from "../router.tsx";

export function FilterActions({ filtered, base }: { filtered: boolean; base: string }) {
  return (
    <div className="filter-actions">
      <button type="submit" className="button primary">
        Filter
      </button>
      {filtered && (
        <button type="button" className="button" onClick={() => navigate(base)}>
          Clear
        </button>
      )}
    </div>
  );
}
