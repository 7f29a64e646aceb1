/** The loki destination's upstream facts (upstream/types.ts): it renders the OTLP/HTTP exporter on both runtimes (the otlphttp folder), so it records nothing of its own. */
import type { TypeUpstream } from "../../upstream/types.ts";

export const UPSTREAM: TypeUpstream = { otelcol: [], alloy: [] };
