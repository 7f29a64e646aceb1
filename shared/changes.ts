/**
 * Pending changes and commits of the git-backed config store as the REST API
 * answers them (/changes, /commits, /commits/{commit}), declared once for the
 * server's routes, the OpenAPI document and the UI's Changes page.
 */
import { Type, type Static } from "@sinclair/typebox";
import { NextCursor } from "./schema.ts";

/** The kinds of record a file of the config repository holds (collector: its activations). */
export const RECORD_KINDS = ["source", "destination", "pipeline", "route", "collector"] as const;
export type RecordKind = (typeof RECORD_KINDS)[number];

/** The record a file holds, named so people need not read UUIDs; absent for files outside the layout. */
export const FileRecordSchema = Type.Object({
  kind: Type.Union(RECORD_KINDS.map((kind) => Type.Literal(kind))),
  id: Type.String(),
  name: Type.Union([Type.String(), Type.Null()], { description: "The record's name (a route: its source and pipeline); null when no version of it is known." }),
});

export const FileChangeSchema = Type.Object({
  path: Type.String(),
  change: Type.Union([Type.Literal("added"), Type.Literal("modified"), Type.Literal("deleted")]),
  record: Type.Optional(FileRecordSchema),
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

/** One commit with the files it changed and their unified diff against its parent. */
export const CommitDiffSchema = Type.Composite([CommitSchema, Type.Object({ items: Type.Array(FileChangeSchema), diff: Type.String() })], {
  title: "CommitDiff",
});

/** GET /changes: the pending changes, one item per file, and their unified diff. */
export const PendingChangesSchema = Type.Object({ items: Type.Array(FileChangeSchema), diff: Type.String() });
/** POST /commit: the commit made and the files it holds. */
export const CommitMadeSchema = Type.Composite([CommitSchema, Type.Object({ files: Type.Array(FileChangeSchema) })]);

export type FileRecord = Static<typeof FileRecordSchema>;
export type FileChange = Static<typeof FileChangeSchema>;
export type Commit = Static<typeof CommitSchema>;
export type CommitDiff = Static<typeof CommitDiffSchema>;
export type PendingChanges = Static<typeof PendingChangesSchema>;
export type CommitMade = Static<typeof CommitMadeSchema>;

export const FileChangeListSchema = Type.Object({ items: Type.Array(FileChangeSchema) });
export const CommitPageSchema = Type.Object({ items: Type.Array(CommitSchema), nextCursor: NextCursor });
export type FileChangeList = Static<typeof FileChangeListSchema>;
export type CommitPage = Static<typeof CommitPageSchema>;
