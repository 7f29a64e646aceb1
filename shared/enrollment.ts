/**
 * What the enrollment REST API answers (server/api/enrollment.ts): enrollment
 * tokens, a collector's own token, install snippets and the bootstrap files
 * for installing a collector, declared once for the server's renderer and
 * routes, the OpenAPI document and the UI.
 */
import { Type, type Static } from "@sinclair/typebox";
import { DateTime, NextCursor, Nullable } from "./schema.ts";
import { RUNTIMES } from "./vocabulary.ts";

/** Who an enrollment token enrolls: an OpAMP collector (one use) or svc-agent. */
export const ENROLLMENT_KINDS = ["opamp", "agent"] as const;

/** A file for the collector host; `path` is where it goes there. */
export const BootstrapFileSchema = Type.Object({ path: Type.String(), contentType: Type.String(), body: Type.String() });
export type BootstrapFile = Static<typeof BootstrapFileSchema>;

export const EnrollmentKindSchema = Type.Union(
  ENROLLMENT_KINDS.map((k) => Type.Literal(k)),
  { errorMessage: `must be one of ${ENROLLMENT_KINDS.join(", ")}` },
);
export const RuntimeNameSchema = Type.Union(
  RUNTIMES.map((r) => Type.Literal(r)),
  { errorMessage: `must be one of ${RUNTIMES.join(", ")}` },
);

export const EnrollmentTokenSchema = Type.Object(
  {
    id: Type.String(),
    kind: EnrollmentKindSchema,
    collectorId: Nullable(Type.String()),
    environment: Nullable(Type.String()),
    expiresAt: DateTime,
    maxUses: Nullable(Type.Integer({ description: "Always 1 for opamp; null is unlimited." })),
    uses: Type.Integer(),
    boundInstanceUid: Nullable(
      Type.String({
        description: "The OpAMP instance_uid the token is bound to; null unless the caller holds tokens:write (uses says whether it was redeemed).",
      }),
    ),
    createdBy: Type.String(),
    createdAt: DateTime,
    revokedAt: Nullable(DateTime),
  },
  { title: "EnrollmentToken" },
);
export type EnrollmentToken = Static<typeof EnrollmentTokenSchema>;

/** POST /enrollment-tokens: the token's record and the token, shown once. */
export const CreatedEnrollmentTokenSchema = Type.Composite([EnrollmentTokenSchema, Type.Object({ token: Type.String({ description: "Shown once." }) })]);

export const CollectorTokenSchema = Type.Object(
  { token: Type.String({ description: "Shown once." }), collectorId: Type.String(), createdAt: DateTime },
  { title: "CollectorToken" },
);
export type CollectorToken = Static<typeof CollectorTokenSchema>;

export const BootstrapFilesSchema = Type.Object({ runtime: RuntimeNameSchema, files: Type.Array(BootstrapFileSchema) });
export type BootstrapFiles = Static<typeof BootstrapFilesSchema>;

/** POST /collectors/bootstrap: the bootstrap files and the enrollment token minted into them. */
export const MintedBootstrapFilesSchema = Type.Composite([BootstrapFilesSchema, Type.Object({ enrollmentTokenId: Type.String(), expiresAt: DateTime })]);

export const SnippetAnswerSchema = Type.Object({
  snippet: Type.String(),
  enrollmentTokenId: Nullable(Type.String({ description: "null for rcfg-remotecfg, which uses the collector's own token." })),
  expiresAt: Nullable(DateTime),
  agentEnrollmentTokenId: Nullable(Type.String({ description: "The agent token's id when ?agent=true." })),
});
export type SnippetAnswer = Static<typeof SnippetAnswerSchema>;

export const EnrollmentTokenPageSchema = Type.Object({ items: Type.Array(EnrollmentTokenSchema), nextCursor: NextCursor });
export type EnrollmentTokenPage = Static<typeof EnrollmentTokenPageSchema>;
