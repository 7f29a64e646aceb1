/**
 * One write the collector page offers (unpin, retry): busy while it runs, its
 * refusal kept to show, and its outcome handed on, so each button stays a
 * few lines and none can be pressed twice at once.
 */
import { useState } from "react";
import type { ApiError } from "../api.ts";

export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  function run(request: () => Promise<unknown>, onDone: () => void) {
    setBusy(true);
    setError(null);
    request()
      .then(onDone, setError)
      .finally(() => setBusy(false));
  }
  return { busy, error, run };
}
