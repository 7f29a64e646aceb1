/**
 * One API read, run again whenever `key` changes. An answer that arrives
 * after a newer read started, or after the component left, is dropped, so a
 * slow old answer never overwrites a newer one. `data` is null until the
 * first answer; a failed read keeps the last data and sets `error`. The
 * setters are for pages that update what they show after their own writes.
 */
import { useEffect, useState } from "react";
import type { ApiError } from "./api.ts";

export function useLoad<T>(load: () => Promise<T>, key: string) {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [loading, setLoading] = useState(true);

  useEffect(() => {
    let current = true;
    load()
      .then(
        (value) => {
          if (!current) return;
          setData(value);
          setError(null);
        },
        (caught: ApiError) => current && setError(caught),
      )
      .finally(() => current && setLoading(false));
    return () => {
      current = false;
    };
    // `load` is rebuilt on every render; `key` says when what it reads changes.
  }, [key]);

  return { data, setData, error, setError, loading };
}
