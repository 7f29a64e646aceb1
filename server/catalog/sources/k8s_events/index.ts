/** The k8s_events source's folder (folder.ts): registered with the catalog when registry.ts imports it. */
import { registerFolder } from "../../folder.ts";
import { CORPUS } from "./corpus.ts";
import { k8sEventsSource } from "./k8s_events.ts";
import { UPSTREAM } from "./upstream.ts";

registerFolder({ type: k8sEventsSource, upstream: UPSTREAM, corpus: CORPUS });
