/** The k8s_cluster source's folder (folder.ts): registered with the catalog when registry.ts imports it. */
import { registerFolder } from "../../folder.ts";
import { CORPUS } from "./corpus.ts";
import { k8sClusterSource } from "./k8s_cluster.ts";
import { UPSTREAM } from "./upstream.ts";

registerFolder({ type: k8sClusterSource, upstream: UPSTREAM, corpus: CORPUS });
