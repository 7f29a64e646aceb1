/** REST: /events — live changes as server-sent events, filtered by the caller's scopes. */
import { type EventHub, eventStream } from "../events/events.ts";
import type { LiveCredentials } from "../auth/live.ts";
import { route, type Route } from "../http/route.ts";

/** What the /events routes use. */
export interface EventsApiDeps {
  events: EventHub;
  live: LiveCredentials;
}

export function eventRoutes(deps: EventsApiDeps): Route[] {
  return [
    route({
      method: "GET",
      path: "/events",
      scope: "collectors:read",
      tag: "events",
      summary:
        "Server-sent events: `collector` (the record, on every status or label change), and with config:read also `config_target`, `rollout` and `worktree` nudges; `resync` when changes may have been missed (refetch everything shown). A `: keepalive` comment every 5 s. The stream ends (after a `: ended: <reason>` comment) the moment its credential does: a deleted token, an ended session, a disabled or deleted user, a changed role.",
      handler: async ({ principal }) => eventStream(deps.events, principal, deps.live),
    }),
  ];
}
