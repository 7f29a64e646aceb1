/**
 * A collector's status as the API reports it (docs/architecture.md "Status model":
 * pending (never connected) → online ⇄ degraded → offline). Without TypeBox on
 * purpose: the UI imports this at run time (its status filter), and its bundle
 * must not carry the schema library.
 */
export const COLLECTOR_STATUSES = ["pending", "online", "degraded", "offline"] as const;
export type CollectorStatus = (typeof COLLECTOR_STATUSES)[number];
