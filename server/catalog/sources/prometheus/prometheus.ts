/**
 * Prometheus scraping of static targets. Runtime R scrapes with
 * `prometheus.scrape` into `otelcol.receiver.prometheus`.
 */
import { Type } from "@sinclair/typebox";
import { attr, block, ref } from "../../alloy-syntax.ts";
import { Closed, Interval, NoReferences } from "../../schemas.ts";
import { defineSource } from "../../types.ts";
import { alloyScrapeTiming, SCRAPE_INTERVAL_REFERENCE } from "../scrape.ts";
import { PROMETHEUS_RECEIVER_DELIVERY } from "../delivery.ts";

export const prometheusSource = defineSource({
  kind: "source",
  type: "prometheus",
  title: "Prometheus scrape",
  description: "Scrapes Prometheus /metrics endpoints of fixed targets.",
  signals: ["metrics"],
  delivery: {
    otelcol:
      "the scraped series through the prometheus receiver's translation (names as exposed, labels as attributes, job and instance as service.name and service.instance.id)",
    alloy: "the same: prometheus.scrape into otelcol.receiver.prometheus, which runs a copy of that translation",
    normalised: null,
    difference: null,
    differsAs: null,
    upstream: [PROMETHEUS_RECEIVER_DELIVERY],
  },
  schema: Closed({
    job_name: Type.String({
      default: "prometheus",
      pattern: "^[A-Za-z0-9_.:-]+$",
      errorMessage: "must be letters, digits, _ . : or -",
      description: "The job label of scraped series.",
    }),
    // Prometheus parses it on Runtime O (model.ParseDuration), Alloy's
    // prometheus.scrape as a Go time.Duration: it must satisfy both.
    scrape_interval: NoReferences(
      Interval({ grammars: ["go", "prometheus"], default: "60s", description: "How often to scrape each target." }),
      SCRAPE_INTERVAL_REFERENCE,
    ),
    targets: Type.Array(Type.String({ pattern: "^\\S+:[0-9]{1,5}$", errorMessage: "must be host:port, e.g. localhost:9100" }), {
      minItems: 1,
      uniqueItems: true,
      description: "host:port of each endpoint to scrape.",
    }),
  }),
  otelcol(config) {
    return {
      type: "prometheus",
      config: {
        config: {
          scrape_configs: [
            {
              job_name: config.job_name,
              scrape_interval: config.scrape_interval,
              static_configs: [{ targets: config.targets }],
            },
          ],
        },
      },
    };
  },
  alloy(config, label, output) {
    return [
      block("prometheus.scrape", label, [
        attr(
          "targets",
          config.targets.map((target) => ({ __address__: target })),
        ),
        attr("forward_to", [ref(`otelcol.receiver.prometheus.${label}.receiver`)]),
        attr("job_name", config.job_name),
        ...alloyScrapeTiming(config.scrape_interval),
      ]),
      block("otelcol.receiver.prometheus", label, [output]),
    ];
  },
});
