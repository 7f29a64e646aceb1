/**
 * One write a page offers: busy while it runs, its refusal kept to show, and
 * its outcome handed on, so each button stays a few lines and none can be
 * pressed twice at once. `setError` is for refusals found before asking the
 * server (a form's own checks); `onFailed` replaces keeping the refusal when
 * a page has more to do with it.
 */
import { useState } from "react";
import { ApiError } from "./api.ts";

export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  function run<T>(request: () => Promise<T>, onDone: (value: T) => void, onFailed: (caught: ApiError) => void = setError) {
    setBusy(true);
    setError(null);
    // Not busy before the outcome is handed on, so it may start the next write.
    request().then(
      (value) => {
        setBusy(false);
        onDone(value);
      },
      (caught: unknown) => {
        setBusy(false);
        onFailed(caught instanceof ApiError ? caught : new ApiError(0, "client_error", String(caught)));
      },
    );
  }
  return { busy, error, setError, run };
}
