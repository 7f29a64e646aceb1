/**
 * The reported attribute keys matchers may read (GET /system/trusted-attributes,
 * server/collectors/trust.ts), for pages that read a collector's attributes as
 * the server does: the list's live filter and a collector's matched pipelines.
 */
import type { TrustedKeys } from "../../shared/collector-attributes.ts";
import { api } from "./client.ts";
import { useLoad } from "./load.ts";

const NONE: TrustedKeys = new Set();

/** The trusted keys, read once per mount; none until they are read (or when they cannot be): nothing reported is read then. */
export function useTrustedKeys(): TrustedKeys {
  const { data } = useLoad(() => api.get("/system/trusted-attributes").then((answer): TrustedKeys => new Set(answer.trusted)), "");
  return data ?? NONE;
}
