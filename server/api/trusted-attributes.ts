/**
 * REST: /system/trusted-attributes — which reported attribute keys matchers may
 * read (collectors/trust.ts, docs/architecture.md "Trust model"). Anyone who
 * reads collectors may see the list; only an admin (users:admin) changes it.
 * A trust change never changes what a collector runs: trusting or un-trusting
 * a key a pipeline's matchers read is refused (409 naming the pipelines).
 * Reading an un-trusted key as absent instead would silently move collectors
 * in or out of that pipeline (widening `!=` matchers) with no plan and no
 * publish; edit the pipeline's matchers first, and publish that.
 */
import { Type } from "@sinclair/typebox";
import { parseMatcherList } from "../../shared/matchers.ts";
import type { Collectors } from "../collectors/collectors.ts";
import type { ConfigStore } from "../configstore/configstore.ts";
import type { Snapshot } from "../configstore/layout.ts";
import { ConflictError, type ErrorDetail } from "../errors.ts";
import { route, type Route } from "../http/route.ts";
import { TrustedListSchema as TrustedList } from "../../shared/system.ts";
import type { Retargeting } from "../rollout/retarget.ts";

const PutBody = Type.Object(
  {
    keys: Type.Array(Type.String({ maxLength: 128 }), {
      maxItems: 64,
      description: "Reported attribute keys to trust (e.g. host.name, os.type); replaces the list.",
    }),
  },
  { additionalProperties: false },
);

/** What the trusted-attributes routes use. */
export interface TrustedAttributesApiDeps {
  collectors: Collectors;
  configStore: Pick<ConfigStore, "worktree">;
  retargeting: Pick<Retargeting, "publishedSnapshot">;
}

/** One detail per pipeline of the working tree or the published commit whose matchers read one of `keys`. */
function pipelinesReading(keys: readonly string[], snapshots: readonly (Snapshot | null)[]): ErrorDetail[] {
  const details = new Map<string, ErrorDetail>();
  for (const snapshot of snapshots) {
    for (const pipeline of snapshot?.pipelines.values() ?? []) {
      if (!pipeline.matchers?.length || details.has(pipeline.id)) continue;
      const read = parseMatcherList(pipeline.matchers)
        .map((m) => m.name)
        .filter((name) => keys.includes(name));
      if (read.length > 0)
        details.set(pipeline.id, {
          path: `pipelines/${pipeline.id}`,
          message: `pipeline "${pipeline.name}" matches on ${read.map((k) => `"${k}"`).join(", ")}`,
        });
    }
  }
  return [...details.values()];
}

export function trustedAttributeRoutes(deps: TrustedAttributesApiDeps): Route[] {
  return [
    route({
      method: "GET",
      path: "/system/trusted-attributes",
      scope: "collectors:read",
      tag: "system",
      summary:
        "The reported attribute keys matchers may read: from the server configuration (fleet.trustedAttributes) and the admin's list. Every other reported attribute is shown on its collector but never targets it.",
      response: TrustedList,
      handler: () => deps.collectors.trust.list(),
    }),
    route({
      method: "PUT",
      path: "/system/trusted-attributes",
      scope: "users:admin",
      tag: "system",
      summary:
        "Replace the admin's list of trusted reported keys; audited (attributes.trust). 400 naming a key svc sets itself (environment, collector.*); 409 (attribute_in_use), nothing written, when a key it adds or drops is read by a pipeline's matchers in the working tree or the published commit (the change would move collectors in or out of it without a publish): edit those pipelines first.",
      body: PutBody,
      response: TrustedList,
      handler: ({ body, principal }) =>
        deps.collectors.trust.set(principal, body.keys, async (changed) => {
          const details = pipelinesReading(changed, [await deps.configStore.worktree(), await deps.retargeting.publishedSnapshot()]);
          if (details.length > 0) {
            throw new ConflictError(
              `Changing whether ${changed.map((k) => `"${k}"`).join(", ")} is trusted would move collectors in or out of pipelines without a publish: ${details.map((d) => d.message).join("; ")}. Edit their matchers (and publish) first.`,
              "attribute_in_use",
              details,
            );
          }
        }),
    }),
  ];
}
