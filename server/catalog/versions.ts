/**
 * Collector versions and the upstream renames that depend on them. A name is
 * chosen by the version the collector reports; unknown versions get the form
 * every supported version accepts (the old names, kept upstream as
 * deprecated aliases), so an unidentified collector still loads its config.
 */
import type { CollectorVersion, OtelcolTarget } from "./types.ts";
import type { OtelcolComponent } from "./upstream/types.ts";

/** The target when nothing is known about the collector. */
export const UNKNOWN_TARGET: OtelcolTarget = { version: null };

/**
 * `0.144.0`, `v0.144.1`, `0.147.0-rc.1` → the release; null for anything
 * else. Only 0.x versions are the collector's own numbering: a vendor
 * distribution reporting its product version (e.g. 9.3.1) says nothing about
 * the collector inside, so it counts as unknown.
 */
export function parseCollectorVersion(text: string | null | undefined): CollectorVersion | null {
  const match = /^v?(0)\.(\d{1,4})\.(\d{1,4})(?:[-+].*)?$/.exec(text?.trim() ?? "");
  if (!match) return null;
  return { major: Number(match[1]), minor: Number(match[2]), patch: Number(match[3]) };
}

function compare(a: CollectorVersion, b: CollectorVersion): number {
  return a.major - b.major || a.minor - b.minor || a.patch - b.patch;
}

/** Whether the collector is known to run `since` or later. */
export function runsAtLeast(target: OtelcolTarget, since: string): boolean {
  const floor = parseCollectorVersion(since);
  if (floor === null) throw new Error(`'${since}' is not a collector version.`);
  return target.version !== null && compare(target.version, floor) >= 0;
}

/**
 * The type to write for an upstream component that may have been renamed:
 * its current name when the collector is known to accept it, else the
 * deprecated alias every supported version accepts.
 */
export function otelcolType(component: OtelcolComponent, target: OtelcolTarget): string {
  const renamed = component.renamed;
  if (renamed === undefined) return component.type;
  return runsAtLeast(target, renamed.since) ? component.type : renamed.deprecated;
}

/**
 * Whether to write a component's replacement keys rather than its deprecated
 * ones: from the version that takes them, and for an unknown version once
 * current releases refuse the deprecated keys.
 */
export function usesNewKeys(component: OtelcolComponent, target: OtelcolTarget): boolean {
  const change = component.keyChange;
  if (change === undefined) return false;
  return target.version === null ? change.refusedBy !== undefined : runsAtLeast(target, change.since);
}

/**
 * Why a collector known to run an older version than `component` needs cannot
 * run the keys the catalog writes for it, or undefined when it can (or its
 * version is unknown: it gets the current form).
 */
export function minimumVersionProblem(component: OtelcolComponent, target: OtelcolTarget): string | undefined {
  const minimum = component.minimumVersion;
  if (minimum === undefined || target.version === null || runsAtLeast(target, minimum.since)) return undefined;
  const { major, minor, patch } = target.version;
  return `the ${component.type} component needs collector v${minimum.since} or later, and the collector reports v${major}.${minor}.${patch}`;
}
