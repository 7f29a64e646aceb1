/**
 * The prometheus source's upstream facts (upstream/types.ts): the collector's
 * prometheus receiver; on Alloy it is prometheus.scrape into
 * otelcol.receiver.prometheus, which hostmetrics renders too (upstream/shared.ts).
 */
import { contrib } from "../../upstream/shared.ts";
import type { TypeUpstream } from "../../upstream/types.ts";

export const UPSTREAM: TypeUpstream = {
  otelcol: [
    {
      type: "prometheus",
      kind: "receiver",
      // `config` is Prometheus' own config.Config; its durations are model.Duration.
      source: contrib("receiver/prometheusreceiver/config.go", "44b9d264a97caee6c3f25f686e7200ffacc3902b"),
      config: {
        config: {
          object: {
            scrape_configs: {
              list: {
                object: {
                  job_name: "string",
                  scrape_interval: "prometheus-duration",
                  scrape_timeout: "prometheus-duration",
                  static_configs: { list: { object: { targets: { list: "string" } } } },
                },
              },
            },
          },
        },
      },
    },
  ],
  alloy: [],
};
