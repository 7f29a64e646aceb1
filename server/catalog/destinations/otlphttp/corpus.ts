/** OTLP/HTTP destination configs the conformance test renders (folder.ts). */
import { FROM_HOST, SECRET } from "../../corpus-values.ts";
import type { CorpusConfig } from "../../folder.ts";
import { CLIENT_SETTINGS } from "../otlp/corpus.ts";

export const CORPUS: readonly CorpusConfig[] = [
  { endpoint: "https://otlp.example.com", headers: { "X-Key": FROM_HOST, Authorization: SECRET } },
  { endpoint: "https://otlp.example.com", ...CLIENT_SETTINGS, sending_queue: { enabled: false } },
];
