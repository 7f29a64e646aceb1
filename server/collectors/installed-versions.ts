/**
 * The releases installer/install.sh installs unless told otherwise: what a
 * host enrolled with the snippet runs, so what a preview without a collector
 * assumes. Read from the script the server serves, so the two cannot disagree.
 */
import installScript from "../../installer/install.sh" with { type: "text" };
import type { Runtime } from "../../shared/vocabulary.ts";

function assigned(name: string): string {
  const match = new RegExp(`^${name}=(\\S+)$`, "m").exec(installScript);
  if (!match) throw new Error(`installer/install.sh sets no ${name}.`);
  return match[1]!;
}

/** Per runtime: otelcol-contrib's release and Alloy's. */
export const INSTALLED_VERSIONS: Readonly<Record<Runtime, string>> = {
  otelcol: assigned("COLLECTOR_VERSION"),
  alloy: assigned("ALLOY_VERSION"),
};
