/**
 * The resource processor's upstream facts (upstream/types.ts): the
 * collector's resource processor; on Alloy it renders as
 * otelcol.processor.transform (the transform processor's folder).
 */
import { contrib } from "../../upstream/shared.ts";
import type { TypeUpstream } from "../../upstream/types.ts";
import { ATTRIBUTE_ACTIONS } from "../attributes/upstream.ts";

export const UPSTREAM: TypeUpstream = {
  otelcol: [
    {
      type: "resource",
      kind: "processor",
      source: contrib("processor/resourceprocessor/config.go", "1ca0305c83b4aef4193c6322f8b60b2a4a9135b0"),
      config: { attributes: ATTRIBUTE_ACTIONS },
    },
  ],
  alloy: [],
};
