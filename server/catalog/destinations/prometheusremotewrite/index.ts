/** The prometheusremotewrite destination's folder (folder.ts): registered with the catalog when registry.ts imports it. */
import { registerFolder } from "../../folder.ts";
import { CORPUS } from "./corpus.ts";
import { prometheusRemoteWriteDestination } from "./prometheusremotewrite.ts";
import { UPSTREAM } from "./upstream.ts";

registerFolder({ type: prometheusRemoteWriteDestination, upstream: UPSTREAM, corpus: CORPUS });
