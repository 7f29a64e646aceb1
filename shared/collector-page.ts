/** The collector list as GET /collectors answers it: each collector with why it needs attention, a page at a time. */
import { Type, type Static } from "@sinclair/typebox";
import { ATTENTION_REASONS } from "./attention.ts";
import { CollectorSchema } from "./collectors.ts";
import { NextCursor } from "./schema.ts";

/** A listed collector, with why it needs attention (the dashboard's reasons) so a row can say so. */
export const ListedCollectorSchema = Type.Composite([
  CollectorSchema,
  Type.Object({
    attention: Type.Array(Type.Union(ATTENTION_REASONS.map((r) => Type.Literal(r))), {
      description:
        "Each reason GET /dashboard counts this collector under (as the `attention` filter selects), in the order failed, offline, unrenderable, pinned, drifted, reportingOnly; empty when none.",
    }),
  }),
]);
export type ListedCollector = Static<typeof ListedCollectorSchema>;
export const CollectorPageSchema = Type.Object({ items: Type.Array(ListedCollectorSchema), nextCursor: NextCursor });
export type CollectorPage = Static<typeof CollectorPageSchema>;
