/** The hostmetrics source's folder (folder.ts): registered with the catalog when registry.ts imports it. */
import { registerFolder } from "../../folder.ts";
import { CORPUS } from "./corpus.ts";
import { hostmetricsSource } from "./hostmetrics.ts";
import { UPSTREAM } from "./upstream.ts";

registerFolder({ type: hostmetricsSource, upstream: UPSTREAM, corpus: CORPUS });
