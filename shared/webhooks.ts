/**
 * Webhooks as the REST API answers them (/webhooks): subscriptions to fleet
 * events, and the delivery log of each. The secret is write-only.
 */
import { Type, type Static } from "@sinclair/typebox";
import { WEBHOOK_EVENTS } from "./webhook-events.ts";

export { WEBHOOK_EVENTS, type WebhookEvent } from "./webhook-events.ts";

export const WebhookEventSchema = Type.Union(WEBHOOK_EVENTS.map((e) => Type.Literal(e)), { errorMessage: `must be one of ${WEBHOOK_EVENTS.join(", ")}` });

export const WebhookSchema = Type.Object(
  {
    id: Type.String(),
    url: Type.String(),
    events: Type.Array(WebhookEventSchema),
    createdAt: Type.String({ format: "date-time" }),
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
    httpStatus: Type.Union([Type.Integer(), Type.Null()]),
    error: Type.Union([Type.String(), Type.Null()]),
    time: Type.String({ format: "date-time" }),
    durationMs: Type.Integer({ minimum: 0 }),
    nextAttemptAt: Type.Union([Type.String({ format: "date-time" }), Type.Null()]),
  },
  { title: "WebhookDelivery" },
);
export type WebhookDelivery = Static<typeof WebhookDeliverySchema>;
