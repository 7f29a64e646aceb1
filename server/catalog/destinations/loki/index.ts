/** The loki destination's folder (folder.ts): registered with the catalog when registry.ts imports it. */
import { registerFolder } from "../../folder.ts";
import { CORPUS } from "./corpus.ts";
import { lokiDestination } from "./loki.ts";
import { UPSTREAM } from "./upstream.ts";

registerFolder({ type: lokiDestination, upstream: UPSTREAM, corpus: CORPUS });
