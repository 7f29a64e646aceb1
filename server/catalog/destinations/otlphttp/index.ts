/** The otlphttp destination's folder (folder.ts): registered with the catalog when registry.ts imports it. */
import { registerFolder } from "../../folder.ts";
import { CORPUS } from "./corpus.ts";
import { otlphttpDestination } from "./otlphttp.ts";
import { UPSTREAM } from "./upstream.ts";

registerFolder({ type: otlphttpDestination, upstream: UPSTREAM, corpus: CORPUS });
