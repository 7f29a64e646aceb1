/** The otlp destination's folder (folder.ts): registered with the catalog when registry.ts imports it. */
import { registerFolder } from "../../folder.ts";
import { CORPUS } from "./corpus.ts";
import { otlpDestination } from "./otlp.ts";
import { UPSTREAM } from "./upstream.ts";

registerFolder({ type: otlpDestination, upstream: UPSTREAM, corpus: CORPUS });
