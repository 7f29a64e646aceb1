/** REST: /webhooks — event subscriptions (the secret is write-only) and their delivery logs. */
import { route, type Route } from "../http/route.ts";
import type { Webhooks } from "../webhooks/webhooks.ts";
import { CreateWebhookSchema, WebhookDeliveryListSchema, WebhookListSchema, WebhookSchema } from "../../shared/webhooks.ts";

/** What the /webhooks routes use. */
export interface WebhooksApiDeps {
  webhooks: Webhooks;
}

export function webhookRoutes(deps: WebhooksApiDeps): Route[] {
  return [
    route({
      method: "POST",
      path: "/webhooks",
      scope: "users:admin",
      tag: "webhooks",
      summary:
        "Subscribe a URL to events; deliveries are signed with the secret (X-Svc-Signature), which is never shown again. https, or plain http to a loopback host only.",
      body: CreateWebhookSchema,
      response: WebhookSchema,
      status: 201,
      handler: ({ body, principal }) => deps.webhooks.create(principal, body),
    }),
    route({
      method: "GET",
      path: "/webhooks",
      scope: "users:admin",
      tag: "webhooks",
      summary: "List webhooks (never their secrets).",
      response: WebhookListSchema,
      handler: async () => ({ items: await deps.webhooks.list() }),
    }),
    route({
      method: "DELETE",
      path: "/webhooks/{id}",
      scope: "users:admin",
      tag: "webhooks",
      summary: "Delete a webhook, its pending deliveries and its log.",
      status: 204,
      handler: ({ params, principal }) => deps.webhooks.delete(principal, params.id!),
    }),
    route({
      method: "GET",
      path: "/webhooks/{id}/deliveries",
      scope: "users:admin",
      tag: "webhooks",
      summary: "The webhook's delivery attempts, newest first (the last 100).",
      response: WebhookDeliveryListSchema,
      handler: async ({ params }) => ({ items: await deps.webhooks.deliveries(params.id!) }),
    }),
  ];
}
