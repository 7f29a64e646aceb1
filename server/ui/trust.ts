/**
 * The reported attribute keys matchers may read (GET /system/trusted-attributes,
 * server/collectors/trust.ts), for pages that read a collector's attributes as
 * the server does: the list's live filter and a collector's matched pipelines.
 */
import { useEffect, useState } from "react";
import type { TrustedKeys } from "../../shared/collector-attributes.ts";
import { api } from "./api.ts";

/** The API's answer (server/api/trusted-attributes.ts). */
export interface TrustedList {
  configured: string[];
  listed: string[];
  trusted: string[];
}

const NONE: TrustedKeys = new Set();

/** The trusted keys, read once per mount; none until they are read (or when they cannot be): nothing reported is read then. */
export function useTrustedKeys(): TrustedKeys {
  const [keys, setKeys] = useState<TrustedKeys>(NONE);
  useEffect(() => {
    let current = true;
    api.get<TrustedList>("/system/trusted-attributes").then(
      (answer) => current && setKeys(new Set(answer.trusted)),
      () => {},
    );
    return () => {
      current = false;
    };
  }, []);
  return keys;
}
