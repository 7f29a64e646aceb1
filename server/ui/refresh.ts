/** How pages fetch again on live events: a counter that throttles their bursts (polling is useLoad's). */
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
