/**
 * An agent's status as the API reports it. Without TypeBox on purpose: the UI
 * imports this at run time, and its bundle must not carry the schema library
 * (it imports the schema modules here for their types only).
 */
export const AGENT_STATUSES = ["online", "offline"] as const;
export type AgentStatus = (typeof AGENT_STATUSES)[number];
