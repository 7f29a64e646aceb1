/**
 * Scrape timing for Alloy's `prometheus.scrape`, shared by the prometheus and
 * hostmetrics sources. Its Validate() refuses a scrape_timeout above the
 * scrape_interval, and the timeout defaults to 10s whatever the interval, so
 * an interval below 10s needs an explicit timeout. On Runtime O, Prometheus
 * itself lowers an unset timeout to the interval (config.go: a scrape
 * config's timeout defaults to min(global timeout, interval)); rendering that
 * same value here keeps the two runtimes alike.
 */
import { attr, type AlloyAttribute } from "../alloy-syntax.ts";
import { parseGoDuration } from "../durations.ts";
import { PROMETHEUS_SCRAPE } from "../upstream/shared.ts";

/** Why a scrape interval takes no attribute reference: alloyScrapeTiming reads it. */
export const SCRAPE_INTERVAL_REFERENCE = "svc reads it to set Alloy's scrape timeout";

const DEFAULT_TIMEOUT = PROMETHEUS_SCRAPE.defaults!.scrape_timeout!;

/** `scrape_interval`, and `scrape_timeout` equal to it when the default timeout would exceed it. */
export function alloyScrapeTiming(interval: string): AlloyAttribute[] {
  const intervalNs = parseGoDuration(interval);
  const timeoutNs = parseGoDuration(DEFAULT_TIMEOUT)!;
  const lowered = intervalNs !== null && intervalNs < timeoutNs;
  return lowered ? [attr("scrape_interval", interval), attr("scrape_timeout", interval)] : [attr("scrape_interval", interval)];
}
