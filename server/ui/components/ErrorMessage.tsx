/**
 * The one way an API error reaches the screen: its message, its code for
 * support, and any details. role="alert" so screen readers announce it.
 */
import type { ApiError } from "../api.ts";
import { isPathDetail } from "../schema/errors.ts";

/** A detail as a line: `path: message` for the API's {path, message}, else as sent. */
function detailText(detail: unknown): string {
  if (isPathDetail(detail)) return detail.path === "" ? detail.message : `${detail.path}: ${detail.message}`;
  return typeof detail === "string" ? detail : JSON.stringify(detail);
}

export function ErrorMessage({ error, id }: { error: ApiError | null; id?: string }) {
  return (
    <div id={id} role="alert" className={error ? "error-box" : "error-box empty"}>
      {error && (
        <>
          <p className="error-message">{error.message}</p>
          <p className="error-code">
            {error.status > 0 ? `HTTP ${error.status} · ` : ""}
            {error.code}
          </p>
          {error.details.length > 0 && (
            <ul className="error-details">
              {error.details.map((detail, i) => (
                <li key={i}>{detailText(detail)}</li>
              ))}
            </ul>
          )}
        </>
      )}
    </div>
  );
}
