/**
 * Webhooks as the REST API answers them (/webhooks): subscriptions to fleet
 * events, and the delivery log of each. The secret is write-only.
 */
import { Type, type Static } from "@sinclair/typebox";
import { DateTime, Nullable } from "./schema.ts";
import { WEBHOOK_EVENTS } from "./webhook-events.ts";

export { WEBHOOK_EVENTS, type WebhookEvent } from "./webhook-events.ts";

export const WebhookEventSchema = Type.Union(
  WEBHOOK_EVENTS.map((e) => Type.Literal(e)),
  { errorMessage: `must be one of ${WEBHOOK_EVENTS.join(", ")}` },
);

export const WebhookSchema = Type.Object(
  {
    id: Type.String(),
    url: Type.String(),
    events: Type.Array(WebhookEventSchema),
    createdAt: DateTime,
    createdBy: Type.String(),
  },
  { title: "Webhook" },
);
export type Webhook = Static<typeof WebhookSchema>;

export const CreateWebhookSchema = Type.Object(
  {
    url: Type.String({ minLength: 1, maxLength: 2000 }),
    events: Type.Array(WebhookEventSchema, { minItems: 1, maxItems: WEBHOOK_EVENTS.length }),
    secret: Type.String({ minLength: 16, maxLength: 256, description: "Signs each delivery (X-Svc-Signature); write-only." }),
  },
  { additionalProperties: false },
);

/** One attempt to deliver one event. */
export const WebhookDeliverySchema = Type.Object(
  {
    id: Type.String(),
    eventId: Type.String(),
    event: WebhookEventSchema,
    attempt: Type.Integer({ minimum: 1 }),
    status: Type.Union([Type.Literal("delivered"), Type.Literal("failed"), Type.Literal("abandoned")], {
      description: "failed: retried later; abandoned: the last attempt, a day after the first.",
    }),
    httpStatus: Nullable(Type.Integer()),
    error: Nullable(Type.String()),
    time: DateTime,
    durationMs: Type.Integer({ minimum: 0 }),
    nextAttemptAt: Nullable(DateTime),
  },
  { title: "WebhookDelivery" },
);
export type WebhookDelivery = Static<typeof WebhookDeliverySchema>;

export const WebhookListSchema = Type.Object({ items: Type.Array(WebhookSchema) });
export const WebhookDeliveryListSchema = Type.Object({ items: Type.Array(WebhookDeliverySchema) });
export type WebhookList = Static<typeof WebhookListSchema>;
export type WebhookDeliveryList = Static<typeof WebhookDeliveryListSchema>;
