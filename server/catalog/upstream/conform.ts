/**
 * Holds rendered configs against the upstream tables: every key a renderer
 * wrote must be one the upstream component takes, with a value its decoder
 * accepts; every Alloy component must load at Alloy's default stability
 * level; every recorded Validate() rule must hold. Returns problems as
 * `path: message` lines (empty when the config conforms); the render tests
 * run it over every golden and each type's corpus.
 */
import { parse } from "yaml";
import { AlloyRawString, AlloyRef, type AlloyBlock, type AlloyStatement, type AlloyValue } from "../alloy-syntax.ts";
import { HostEnvValue } from "../host-env.ts";
import { parseGoDuration, parsePrometheusDuration } from "../durations.ts";
import { ALLOY_DEFAULT_STABILITY } from "./shared.ts";
import { alloyComponent, otelcolComponent } from "./tables.ts";
import type { AlloyBody, OtelcolKind, ValueType } from "./types.ts";

const UINT32_MAX = 4294967295;

type Value = unknown;

function isPlainObject(value: Value): value is Record<string, Value> {
  return (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    !(value instanceof AlloyRef) &&
    !(value instanceof AlloyRawString) &&
    !(value instanceof HostEnvValue)
  );
}

/** `value` as upstream's decoder for `type` takes it. */
export function valueProblems(value: Value, type: ValueType, path: string): string[] {
  // An Alloy reference takes the type of the export it names (`….targets` is a list of targets); the golden
  // tests check that every reference names a defined block.
  if (value instanceof AlloyRef) return [];
  // `sys.env("NAME")` is a string (Alloy's stdlib), which Alloy also converts to a secret where one is wanted.
  if (value instanceof HostEnvValue)
    return type === "string" ? [] : [`${path}: sys.env(${JSON.stringify(value.name)}) is a string, not what upstream takes here`];
  const text = value instanceof AlloyRawString ? value.text : value;
  const bad = (what: string) => [`${path}: ${JSON.stringify(text)} is not ${what}`];
  if (typeof type === "string") {
    switch (type) {
      case "string":
        return typeof text === "string" ? [] : bad("a string");
      case "bool":
        return typeof text === "boolean" ? [] : bad("a bool");
      case "int":
        return Number.isSafeInteger(text) ? [] : bad("an integer");
      case "uint32":
        return Number.isSafeInteger(text) && (text as number) >= 0 && (text as number) <= UINT32_MAX ? [] : bad("a uint32");
      case "scalar":
        return typeof text === "string" || typeof text === "boolean" || (typeof text === "number" && Number.isFinite(text)) ? [] : bad("a scalar");
      case "go-duration":
        return typeof text === "string" && parseGoDuration(text) !== null ? [] : bad("a Go duration");
      case "prometheus-duration":
        return typeof text === "string" && parsePrometheusDuration(text) !== null ? [] : bad("a Prometheus duration");
      case "capsule":
        return bad("a reference to a component export");
    }
  }
  if ("oneOf" in type) {
    return typeof text === "string" && type.oneOf.includes(text) ? [] : bad(`one of ${type.oneOf.join(", ")}`);
  }
  if ("list" in type) {
    if (!Array.isArray(value)) return bad("a list");
    return value.flatMap((item, i) => valueProblems(item, type.list, `${path}[${i}]`));
  }
  if ("map" in type) {
    if (!isPlainObject(value)) return bad("a map");
    return Object.entries(value).flatMap(([key, item]) => valueProblems(item, type.map, `${path}.${key}`));
  }
  if (!isPlainObject(value)) return bad("an object");
  return keyedProblems(value, type.object, path);
}

function keyedProblems(value: Record<string, Value>, keys: Readonly<Record<string, ValueType>>, path: string): string[] {
  return Object.entries(value).flatMap(([key, item]) => {
    const type = keys[key];
    if (type === undefined) return [`${path}.${key}: is not a key upstream takes here`];
    return valueProblems(item, type, `${path}.${key}`);
  });
}

const SECTIONS: Record<string, OtelcolKind> = { receivers: "receiver", processors: "processor", exporters: "exporter" };

/**
 * A rendered collector YAML: each component's type is one upstream has (a
 * deprecated alias counts) and its config matches the table. `$$` is the
 * collector's escape for `$` and is undone first.
 */
export function otelcolProblems(text: string): string[] {
  const config = unescapeDollars(parse(text)) as Record<string, Record<string, Value>>;
  const problems: string[] = [];
  for (const [section, kind] of Object.entries(SECTIONS)) {
    for (const [id, body] of Object.entries(config[section] ?? {})) {
      const type = id.split("/")[0]!;
      const component = otelcolComponent(kind, type);
      if (component === undefined) {
        problems.push(`${section}.${id}: no upstream ${kind} has type '${type}'`);
        continue;
      }
      if (!isPlainObject(body)) {
        problems.push(`${section}.${id}: is not a map`);
        continue;
      }
      problems.push(...keyedProblems(body, component.config, `${section}.${id}`));
    }
  }
  return problems;
}

function unescapeDollars(value: Value): Value {
  if (typeof value === "string") return value.replaceAll("$$", "$");
  if (Array.isArray(value)) return value.map(unescapeDollars);
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, unescapeDollars(v)]));
  return value;
}

/** Rendered Alloy blocks: known components at the default stability level, arguments as upstream declares them, rules kept. */
export function alloyProblems(blocks: readonly AlloyBlock[]): string[] {
  return blocks.flatMap((b) => {
    const path = `${b.name}.${b.label ?? ""}`;
    const component = alloyComponent(b.name);
    if (component === undefined) return [`${path}: not a recorded Alloy component`];
    const problems: string[] = [];
    if (component.stability !== ALLOY_DEFAULT_STABILITY) {
      problems.push(`${path}: is ${component.stability}; Alloy loads only ${ALLOY_DEFAULT_STABILITY} components by default`);
    }
    if (b.label === undefined) problems.push(`${path}: a component needs a label`);
    problems.push(...bodyProblems(b.body, component.arguments, path));
    for (const rule of component.rules ?? []) {
      const read = (name: string) => {
        const statement = b.body.find((s) => s.kind === "attribute" && s.name === name);
        const value = statement?.kind === "attribute" ? statement.value : component.defaults?.[name];
        return typeof value === "string" ? parseGoDuration(value) : null;
      };
      const left = read(rule.left);
      const right = read(rule.right);
      if (left === null || right === null) problems.push(`${path}: cannot read ${rule.left} and ${rule.right} for Validate()`);
      else if (left > right) problems.push(`${path}: ${rule.left} is greater than ${rule.right}, which Validate() refuses`);
    }
    return problems;
  });
}

function bodyProblems(body: readonly AlloyStatement[], members: AlloyBody, path: string): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const statement of body) {
    const at = `${path}.${statement.name}`;
    const member = members[statement.name];
    if (member === undefined) {
      problems.push(`${at}: is not an argument or block upstream takes here`);
      continue;
    }
    if (statement.kind === "attribute") {
      if (!("attr" in member)) problems.push(`${at}: upstream takes a block here, not an attribute`);
      else if (seen.has(statement.name)) problems.push(`${at}: is set twice`);
      else problems.push(...valueProblems(statement.value as AlloyValue, member.attr, at));
    } else if (!("block" in member)) {
      problems.push(`${at}: upstream takes an attribute here, not a block`);
    } else {
      if (seen.has(statement.name) && !member.repeatable) problems.push(`${at}: upstream takes this block once`);
      problems.push(...bodyProblems(statement.body, member.block, at));
    }
    seen.add(statement.name);
  }
  return problems;
}
