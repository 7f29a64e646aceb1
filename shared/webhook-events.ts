/**
 * The events a webhook can subscribe to, as written in the API. Without
 * TypeBox on purpose: the UI imports this at run time (the Webhooks page's
 * checkboxes), and its bundle must not carry the schema library.
 */
export const WEBHOOK_EVENTS = [
  "rollout.paused",
  "rollout.completed",
  "rollout.failed",
  "collector.offline",
  "collector.stalled",
  "collector.drifted",
  "token.expiring",
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];
