/**
 * Live updates: one EventSource on /api/v1/events shared by every component
 * that listens, opened while at least one does and closed after the last
 * leaves. The browser reconnects a dropped stream by itself; listeners are
 * told (type "reconnected") so they can refetch what they may have missed,
 * and the same when the server says it may have missed changes (`resync`).
 * A page being left closes its stream itself: in Chromium the streams of
 * pages left by full loads were seen to stay open, and once they filled the
 * six connections a browser allows per host without HTTP/2 (MDN, EventSource:
 * https://developer.mozilla.org/en-US/docs/web/api/eventsource), no request
 * of the new page was sent (test/ui/fleet-targeting.test.ts hung so). A page
 * restored from the back/forward cache opens it again.
 */
import { useEffect, useRef } from "react";
import { apiUrl } from "./client.ts";

/** The server's LiveEvent (server/events/events.ts). */
export interface LiveEvent {
  type: "collector" | "config_target" | "rollout" | "worktree";
  id: string;
  op: "put" | "delete";
  /** The record as stored, for collector and config_target events; the others are a nudge to refetch. */
  data?: unknown;
}

export type LiveListener = (event: LiveEvent | { type: "reconnected" }) => void;

const TYPES: LiveEvent["type"][] = ["collector", "config_target", "rollout", "worktree"];
const listeners = new Set<LiveListener>();
let source: EventSource | null = null;

function open(): void {
  const es = new EventSource(apiUrl("/events"));
  let opened = false;
  es.onopen = () => {
    if (opened) for (const l of listeners) l({ type: "reconnected" });
    opened = true;
  };
  es.addEventListener("resync", () => {
    for (const l of listeners) l({ type: "reconnected" });
  });
  for (const type of TYPES) {
    es.addEventListener(type, (message) => {
      const event = JSON.parse((message as MessageEvent<string>).data) as LiveEvent;
      for (const l of listeners) l(event);
    });
  }
  source = es;
}

addEventListener("pagehide", () => {
  source?.close();
  source = null;
});
addEventListener("pageshow", (event) => {
  if (!event.persisted || source || listeners.size === 0) return;
  open();
  // Whatever happened while the page was away was not heard.
  for (const l of listeners) l({ type: "reconnected" });
});

function listen(listener: LiveListener): () => void {
  listeners.add(listener);
  if (!source) open();
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && source) {
      source.close();
      source = null;
    }
  };
}

/**
 * Calls `onEvent` for each live event of the given types (and on reconnect).
 * The latest `onEvent` is always used, so callers need not memoise it.
 */
export function useLiveEvents(types: readonly LiveEvent["type"][], onEvent: LiveListener): void {
  const handler = useRef(onEvent);
  handler.current = onEvent;
  const key = types.join(",");
  useEffect(() => {
    const wanted = new Set(key.split(","));
    return listen((event) => {
      if (event.type === "reconnected" || wanted.has(event.type)) handler.current(event);
    });
  }, [key]);
}
