/**
 * Pending changes and commits of the git-backed config store as the REST API
 * answers them (/changes, /commits), declared once for the server's routes, the
 * OpenAPI document and the UI's Changes page.
 */
import { Type, type Static } from "@sinclair/typebox";

export const FileChangeSchema = Type.Object({
  path: Type.String(),
  change: Type.Union([Type.Literal("added"), Type.Literal("modified"), Type.Literal("deleted")]),
});

export const CommitSchema = Type.Object(
  {
    commit: Type.String({ description: "Git commit id." }),
    message: Type.String(),
    author: Type.String(),
    time: Type.String({ format: "date-time" }),
    parent: Type.Union([Type.String(), Type.Null()]),
  },
  { title: "Commit" },
);
export type FileChange = Static<typeof FileChangeSchema>;
export type Commit = Static<typeof CommitSchema>;
