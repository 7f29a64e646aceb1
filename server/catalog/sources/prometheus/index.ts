/** The prometheus source's folder (folder.ts): registered with the catalog when registry.ts imports it. */
import { registerFolder } from "../../folder.ts";
import { CORPUS } from "./corpus.ts";
import { prometheusSource } from "./prometheus.ts";
import { UPSTREAM } from "./upstream.ts";

registerFolder({ type: prometheusSource, upstream: UPSTREAM, corpus: CORPUS });
