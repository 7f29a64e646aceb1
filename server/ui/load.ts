/**
 * One API read, run again whenever `key` changes. An answer that arrives
 * after a newer read started, or after the component left, is dropped, so a
 * slow old answer never overwrites a newer one. `data` is null until the
 * first answer; a failed read keeps the last data and sets `error`. The
 * setters are for pages that update what they show after their own writes.
 * A null `load` reads nothing and forgets what was read: the page has nothing
 * (valid) to ask.
 */
import { useEffect, useRef, useState } from "react";
import type { ApiError } from "./api.ts";

export interface LoadOptions<T> {
  /** When the key changes, forget the last answer and error ("all": they were about something else) or only the error (the answer stays on screen until the next one). */
  reset?: "all" | "error";
  /** Wait this long after the key last changed before reading (a field being typed in). */
  delayMs?: number;
  /** Read again this often while the key stays (live figures). */
  everyMs?: number;
  /** A failed read also forgets the last answer. */
  clearOnError?: boolean;
  /** Told of each current answer, after `data` took it. */
  onData?: (value: T) => void;
  /** Told of each current failure, after `error` took it. */
  onError?: (caught: ApiError) => void;
}

export function useLoad<T>(load: (() => Promise<T>) | null, key: string, options: LoadOptions<T> = {}) {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<ApiError | null>(null);
  const [loading, setLoading] = useState(true);
  const [pending, setPending] = useState(load !== null);
  // The callbacks of the latest render, so a read started earlier reports to them.
  const latest = useRef(options);
  latest.current = options;

  useEffect(() => {
    const { reset, delayMs, everyMs } = latest.current;
    if (reset === "all") setData(null);
    if (reset) setError(null);
    if (load === null) {
      setData(null);
      setError(null);
      setPending(false);
      return;
    }
    let current = true;
    const read = () =>
      load()
        .then(
          (value) => {
            if (!current) return;
            setData(value);
            setError(null);
            latest.current.onData?.(value);
          },
          (caught: ApiError) => {
            if (!current) return;
            if (latest.current.clearOnError) setData(null);
            setError(caught);
            latest.current.onError?.(caught);
          },
        )
        .finally(() => {
          if (!current) return;
          setLoading(false);
          setPending(false);
        });
    setPending(true);
    const timer = delayMs === undefined ? (void read(), undefined) : setTimeout(read, delayMs);
    const poll = everyMs === undefined ? undefined : setInterval(read, everyMs);
    return () => {
      current = false;
      clearTimeout(timer);
      clearInterval(poll);
    };
    // `load` is rebuilt on every render; `key` (and whether there is anything to read) says when what it reads changes.
  }, [key, load === null]);

  return { data, setData, error, setError, loading, pending };
}
