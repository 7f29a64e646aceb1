/**
 * A minimal History-API router: the UI has a handful of flat routes under
 * /ui/, which does not justify a routing library. The server answers
 * index.html for every /ui/ path, so deep links and reloads work.
 */
import { useEffect, useSyncExternalStore, type AnchorHTMLAttributes, type MouseEvent } from "react";

const listeners = new Set<() => void>();

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  window.addEventListener("popstate", listener);
  return () => {
    listeners.delete(listener);
    window.removeEventListener("popstate", listener);
  };
}

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (options.replace) history.replaceState(null, "", to);
  else history.pushState(null, "", to);
  for (const listener of listeners) listener();
}

/** The current path and query, re-rendering on every navigation. */
export function useLocation(): { pathname: string; search: URLSearchParams } {
  const href = useSyncExternalStore(subscribe, () => location.pathname + location.search);
  const url = new URL(href, location.origin);
  return { pathname: url.pathname, search: url.searchParams };
}

/** A plain link that navigates without a page load (modified clicks open normally). */
export function Link(props: AnchorHTMLAttributes<HTMLAnchorElement> & { href: string }) {
  const onClick = (event: MouseEvent<HTMLAnchorElement>) => {
    props.onClick?.(event);
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(props.href);
  };
  // biome-ignore lint/a11y/useValidAnchor: props has the href (required by the type); the handler only keeps the page
  // biome-ignore lint/a11y/useKeyWithClickEvents: as above: a real link, so Enter follows it
  // biome-ignore lint/a11y/noStaticElementInteractions: as above
  return <a {...props} onClick={onClick} />;
}

/** Renders nothing and moves to `to`; replaces history so Back does not bounce. */
export function Redirect({ to }: { to: string }) {
  useEffect(() => navigate(to, { replace: true }), [to]);
  return null;
}
