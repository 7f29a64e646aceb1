/** The otlp source's folder (folder.ts): registered with the catalog when registry.ts imports it. */
import { registerFolder } from "../../folder.ts";
import { CORPUS } from "./corpus.ts";
import { otlpSource } from "./otlp.ts";
import { UPSTREAM } from "./upstream.ts";

registerFolder({ type: otlpSource, upstream: UPSTREAM, corpus: CORPUS });
