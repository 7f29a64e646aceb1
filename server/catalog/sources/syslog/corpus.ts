/** Syslog source configs the conformance test renders (folder.ts). */
import type { CorpusConfig } from "../../folder.ts";

export const CORPUS: readonly CorpusConfig[] = [{}, { transport: "udp", protocol: "rfc3164", listen_address: ":514" }];
