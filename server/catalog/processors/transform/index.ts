/** The transform processor's folder (folder.ts): registered with the catalog when registry.ts imports it. */
import { registerFolder } from "../../folder.ts";
import { CORPUS } from "./corpus.ts";
import { transformProcessor } from "./transform.ts";
import { UPSTREAM } from "./upstream.ts";

registerFolder({ type: transformProcessor, upstream: UPSTREAM, corpus: CORPUS });
