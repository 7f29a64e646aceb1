/** Journald source configs the conformance test renders (folder.ts). */
import type { CorpusConfig } from "../../folder.ts";

export const CORPUS: readonly CorpusConfig[] = [{}, { units: ["sshd", "nginx.service"], directory: "/var/log/journal" }];
