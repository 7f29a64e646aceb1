/** OTLP source configs the conformance test renders (folder.ts). */
import type { CorpusConfig } from "../../folder.ts";

export const CORPUS: readonly CorpusConfig[] = [{}, { grpc: { enabled: false } }, { http: { enabled: false }, grpc: { endpoint: "0.0.0.0:4317" } }];
