/** How pages fetch again: a counter that throttles bursts of live events, and polling that pauses while the tab is hidden. */
import { useEffect, useRef, useState } from "react";

/** A counter bumped at most once per `ms` however often `bump` is called (trailing). */
export function useThrottledCounter(ms: number): [number, () => void] {
  const [count, setCount] = useState(0);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  useEffect(() => () => void (timer.current && clearTimeout(timer.current)), []);
  const bump = () => {
    if (timer.current !== null) return;
    timer.current = setTimeout(() => {
      timer.current = null;
      setCount((n) => n + 1);
    }, ms);
  };
  return [count, bump];
}

/** Calls `load` now and every `every` ms while the tab is visible; a new `reload` restarts it. */
export function useVisiblePolling(load: () => void, reload: unknown, every: number) {
  useEffect(() => {
    let timer: ReturnType<typeof setInterval> | null = null;
    const start = () => {
      if (timer !== null || document.visibilityState !== "visible") return;
      load();
      timer = setInterval(load, every);
    };
    const stop = () => {
      if (timer !== null) clearInterval(timer);
      timer = null;
    };
    const onVisibility = () => (document.visibilityState === "visible" ? start() : stop());
    start();
    document.addEventListener("visibilitychange", onVisibility);
    return () => {
      stop();
      document.removeEventListener("visibilitychange", onVisibility);
    };
    // load is rebuilt each render; callers pass one that only reads stable setters and ids.
  }, [reload]);
}
