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
  /** Read again this often while the key stays (live figures); `delayMs` does not apply then. */
  everyMs?: number;
  /** With `everyMs`: no reads while the tab is hidden, and one at once when it shows again. */
  pauseHidden?: boolean;
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
    const { reset, delayMs, everyMs, pauseHidden = false } = latest.current;
    if (reset === "all") setData(null);
    if (reset) setError(null);
    if (load === null) {
      setData(null);
      setError(null);
      setPending(false);
      return;
    }
    let current = true;
    const read = () => {
      setPending(true);
      return load()
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
    };
    let stop: () => void;
    if (everyMs !== undefined) stop = poll(read, everyMs, pauseHidden);
    else if (delayMs === undefined) {
      void read();
      stop = () => undefined;
    } else {
      // Pending already while waiting: what is shown is about to be replaced.
      setPending(true);
      const timer = setTimeout(read, delayMs);
      stop = () => clearTimeout(timer);
    }
    return () => {
      current = false;
      stop();
    };
    // `load` is rebuilt on every render; `key` (and whether there is anything to read) says when what it reads changes.
  }, [key, load === null]);

  return { data, setData, error, setError, loading, pending };
}

/** Calls `read` now and every `every` ms (only while the tab is visible, when `pauseHidden`); returns what stops it. */
function poll(read: () => void, every: number, pauseHidden: boolean): () => void {
  let timer: ReturnType<typeof setInterval> | null = null;
  const start = () => {
    if (timer !== null || (pauseHidden && document.visibilityState !== "visible")) return;
    read();
    timer = setInterval(read, every);
  };
  const pause = () => {
    if (timer !== null) clearInterval(timer);
    timer = null;
  };
  const onVisibility = () => (document.visibilityState === "visible" ? start() : pause());
  start();
  if (pauseHidden) document.addEventListener("visibilitychange", onVisibility);
  return () => {
    pause();
    document.removeEventListener("visibilitychange", onVisibility);
  };
}
