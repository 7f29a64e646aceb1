/** The debug destination's folder (folder.ts): registered with the catalog when registry.ts imports it. */
import { registerFolder } from "../../folder.ts";
import { CORPUS } from "./corpus.ts";
import { debugDestination } from "./debug.ts";
import { UPSTREAM } from "./upstream.ts";

registerFolder({ type: debugDestination, upstream: UPSTREAM, corpus: CORPUS });
