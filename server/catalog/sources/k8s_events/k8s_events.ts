/**
 * Kubernetes events (scheduling, image pulls, restarts, …) as logs, watched
 * on the Kubernetes API with the pod's service account, which is what both
 * runtimes support alike (Alloy's client reads a kubeconfig only from a
 * named file; the collector's kubeConfig from the default locations), so
 * the collector runs in the cluster. Runtime O watches the `events` resource with
 * contrib's k8sobjects receiver; Runtime R with Alloy's generally available
 * `loki.source.kubernetes_events` into `otelcol.receiver.loki`.
 *
 * The records differ as a whole (render/parity.ts refuses a processor that
 * reads them on Runtime R): on Runtime O the body is the watch event as a
 * map (`type` and the Event `object`) with attributes k8s.resource.name,
 * event.domain and event.name (k8sobjectsreceiver
 * unstructured_to_logdata.go at a68e9a17); on Runtime R the body is a
 * logfmt line (name, kind, action, reason, type, msg, …) and the attributes
 * are the Loki labels namespace, job and instance (Alloy
 * loki/source/kubernetes_events/event_controller.go at 66ebea85).
 */
import { Type } from "@sinclair/typebox";
import { attr, block, ref } from "../../alloy-syntax.ts";
import { Closed } from "../../schemas.ts";
import { defineSource } from "../../types.ts";
import { upstreamAbout } from "../delivery.ts";
import { DELIVERY_UPSTREAM } from "./upstream.ts";
import { RUNTIME_NAMES } from "../../../../shared/vocabulary.ts";

/** A namespace name: an RFC 1123 label. */
const Namespace = Type.String({
  pattern: "^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$",
  errorMessage: "must be a Kubernetes namespace name (lower-case letters, digits and -)",
});

export const k8sEventsSource = defineSource({
  kind: "source",
  type: "k8s_events",
  title: "Kubernetes events",
  description: "Watches Kubernetes events (scheduling, image pulls, restarts, evictions) as logs. Run on one collector per cluster.",
  signals: ["logs"],
  delivery: {
    otelcol: "body: the watch event as a map (type and the Event object); attributes k8s.resource.name, event.domain, event.name; no severity",
    alloy: "body: a logfmt line (name, kind, action, reason, type, msg); attributes namespace, job, instance and loki.attribute.labels; no severity",
    normalised: null,
    difference: `a Kubernetes event record is the watch event as a map (type and the Event object) with attributes k8s.resource.name, event.domain and event.name on ${RUNTIME_NAMES.otelcol} but a logfmt line (name, kind, action, reason, type, msg) with attributes namespace, job, instance and loki.attribute.labels on ${RUNTIME_NAMES.alloy}`,
    differsAs: "whole",
    upstream: [...DELIVERY_UPSTREAM, ...upstreamAbout("otelcol/receiver/loki")],
  },
  schema: Closed({
    namespaces: Type.Array(Namespace, { uniqueItems: true, default: [], description: "Namespaces to watch; empty watches every namespace." }),
  }),
  otelcol(config) {
    return {
      type: "k8sobjects",
      config: {
        auth_type: "serviceAccount",
        objects: [{ name: "events", mode: "watch", ...(config.namespaces.length > 0 ? { namespaces: config.namespaces } : {}) }],
      },
    };
  },
  alloy(config, label, output) {
    // Without a client block Alloy uses the in-cluster config, the pod's service account (common/kubernetes ClientArguments).
    return [
      block("loki.source.kubernetes_events", label, [
        config.namespaces.length > 0 && attr("namespaces", config.namespaces),
        attr("forward_to", [ref(`otelcol.receiver.loki.${label}.receiver`)]),
      ]),
      block("otelcol.receiver.loki", label, [output]),
    ];
  },
});
