/** REST: pending changes, commit, discard and history of the git-backed config store. */
import { Type } from "@sinclair/typebox";
import { CommitDiffSchema, CommitMadeSchema, CommitPageSchema, FileChangeListSchema, PendingChangesSchema } from "../../shared/changes.ts";
import type { Collectors } from "../collectors/collectors.ts";
import type { ConfigStore } from "../configstore/configstore.ts";
import { collectorNamesFrom } from "../configstore/names.ts";
import type { Logger } from "pino";
import type { SecretVault } from "../secrets/vault.ts";
import type { Store } from "../store/store.ts";
import { route, type Route } from "../http/route.ts";
import { PageQuery } from "../http/schemas.ts";
import { upgradeSecrets } from "../rollout/secrets-upgrade.ts";

const CommitBody = Type.Object(
  { message: Type.String({ minLength: 1, maxLength: 10_000, pattern: "\\S", errorMessage: "must be a non-blank commit message" }) },
  { additionalProperties: false },
);

/** What the /changes and /commits routes use. */
export interface ChangesApiDeps {
  configStore: ConfigStore;
  collectors: Pick<Collectors, "get">;
  store: Store;
  vault: SecretVault;
  logger: Logger;
}

export function changeRoutes(deps: ChangesApiDeps): Route[] {
  return [
    route({
      method: "GET",
      path: "/changes",
      scope: "config:read",
      tag: "changes",
      summary: "Pending (uncommitted) changes, one item per file with the record it holds and its name, and their unified diff.",
      response: PendingChangesSchema,
      handler: () => deps.configStore.changes(collectorNamesFrom(deps.collectors)),
    }),
    route({
      method: "POST",
      path: "/changes/discard",
      scope: "config:write",
      tag: "changes",
      summary:
        "Drop every pending change; the working tree returns to the last commit (a plaintext secret a commit from before secrets were kept apart holds moves to the vault again).",
      response: FileChangeListSchema,
      handler: async ({ principal }) => {
        const items = await deps.configStore.discard(principal);
        await upgradeSecrets(deps);
        return { items };
      },
    }),
    route({
      method: "POST",
      path: "/commit",
      scope: "config:commit",
      tag: "changes",
      summary: "Commit every pending change with a message; 409 nothing_to_commit when there is none.",
      body: CommitBody,
      response: CommitMadeSchema,
      status: 201,
      handler: ({ body, principal }) => deps.configStore.commit(principal, body.message),
    }),
    route({
      method: "GET",
      path: "/commits",
      scope: "config:read",
      tag: "changes",
      summary: "Commit history, newest first, cursor-paginated.",
      query: Type.Object(PageQuery, { additionalProperties: false }),
      response: CommitPageSchema,
      handler: ({ query }) => deps.configStore.commits(query.limit ?? 100, query.cursor),
    }),
    route({
      method: "GET",
      path: "/commits/export",
      scope: "config:read",
      tag: "changes",
      summary: "The whole commit history as a git bundle (`git clone` reads it); 409 no_history before the first commit.",
      produces: "application/x-git-bundle",
      handler: async ({ principal }) => {
        const { head, bundle } = await deps.configStore.exportBundle(principal);
        return new Response(bundle, {
          headers: {
            "Content-Type": "application/x-git-bundle",
            "Content-Disposition": `attachment; filename="svc-config-${head.slice(0, 7)}.bundle"`,
          },
        });
      },
    }),
    route({
      method: "GET",
      path: "/commits/{commit}",
      scope: "config:read",
      tag: "changes",
      summary:
        "One commit: the files it changed, each with the record it holds and its name, and their unified diff against its parent; 404 for an unknown commit.",
      response: CommitDiffSchema,
      handler: ({ params }) => deps.configStore.commitDiff(params.commit!, collectorNamesFrom(deps.collectors)),
    }),
  ];
}
