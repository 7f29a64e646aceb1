/**
 * The upstream tables the conformance checks and the version rules read:
 * every registered folder's records (`<kind>/<type>/upstream.ts`) with the
 * shared ones (shared.ts), each component recorded once.
 */
import { FOLDERS } from "../registry.ts";
import { minimumVersionProblem } from "../versions.ts";
import type { OtelcolTarget } from "../types.ts";
import { SHARED_UPSTREAM } from "./shared.ts";
import type { AlloyComponent, OtelcolComponent, OtelcolKind, TypeUpstream, UpstreamSource } from "./types.ts";

const UPSTREAMS: readonly TypeUpstream[] = [SHARED_UPSTREAM, ...FOLDERS.map((f) => f.upstream)];

function once<T>(entries: readonly (readonly [string, T])[], what: string): ReadonlyMap<string, T> {
  const map = new Map<string, T>();
  for (const [key, value] of entries) {
    if (map.has(key)) throw new Error(`The upstream ${what} ${key} is recorded twice.`);
    map.set(key, value);
  }
  return map;
}

/** Every recorded collector component, by `kind/type`. */
export const OTELCOL_COMPONENTS = once(
  UPSTREAMS.flatMap((u) => u.otelcol.map((c) => [`${c.kind}/${c.type}`, c] as const)),
  "collector component",
);

/** Every recorded Alloy component, by block name. */
export const ALLOY_COMPONENTS = once(
  UPSTREAMS.flatMap((u) => u.alloy.map((c) => [c.name, c] as const)),
  "Alloy component",
);

/** The record for a rendered `kind` of `type`, deprecated aliases included. */
export function otelcolComponent(kind: OtelcolKind, type: string): OtelcolComponent | undefined {
  return OTELCOL_COMPONENTS.get(`${kind}/${type}`) ?? [...OTELCOL_COMPONENTS.values()].find((c) => c.kind === kind && c.renamed?.deprecated === type);
}

/** The record for an Alloy block name. */
export function alloyComponent(name: string): AlloyComponent | undefined {
  return ALLOY_COMPONENTS.get(name);
}

/**
 * Why a collector known to run an older version than the receiver `type`
 * needs cannot run the keys the catalog writes for it, or undefined when it
 * can (or its version is unknown: it gets the current form).
 */
export function versionProblem(type: string, target: OtelcolTarget): string | undefined {
  const component = otelcolComponent("receiver", type);
  return component === undefined ? undefined : minimumVersionProblem(component, target);
}

/** Every file and revision a fact was read from. */
export function upstreamSources(upstream: TypeUpstream): UpstreamSource[] {
  return [
    ...upstream.otelcol.flatMap((c) => [
      c.source,
      ...(c.renamed ? [c.renamed.source] : []),
      ...(c.keyChange ? [c.keyChange.source] : []),
      ...(c.minimumVersion ? [c.minimumVersion.source] : []),
    ]),
    ...upstream.alloy.flatMap((c) => [c.source, ...(c.rules ?? []).map((r) => r.source)]),
    ...(upstream.also ?? []),
  ];
}
