/**
 * The typed client: every call names a route of the contract
 * (shared/api-routes.ts) by its path template, fills its `{name}` parameters
 * (encoded here, so no page builds a path by hand) and gets the answer typed
 * from the route's shared schema. A path the contract does not list does not
 * compile. Transport, CSRF and errors are apiRequest's (api.ts).
 */
import type { Static, TSchema } from "@sinclair/typebox";
import type { ApiRoutes } from "../../shared/api-routes.ts";
import { apiRequest } from "./api.ts";

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
type Route = keyof ApiRoutes;
/** The paths the contract lists for one method. */
type PathOf<M extends Method> = Route extends infer K ? (K extends `${M} ${infer P}` ? P : never) : never;
type AnswerOf<K> = K extends Route ? (ApiRoutes[K] extends { response: infer S extends TSchema } ? Static<S> : undefined) : never;
type ParamNames<P extends string> = P extends `${string}{${infer N}}${infer Rest}` ? N | ParamNames<Rest> : never;

/** A query string's values: a list repeats its key; undefined and null leave it out. Or the query itself. */
export type Query = Record<string, string | number | boolean | readonly string[] | undefined | null> | URLSearchParams;
interface Common {
  query?: Query;
  body?: unknown;
}
/** The options of a call to path P: `params` exactly when P has parameters. */
type Options<P extends string> = [ParamNames<P>] extends [never] ? [options?: Common] : [options: Common & { params: Record<ParamNames<P>, string> }];

/** The path with its parameters filled in and encoded, and the query appended. */
export function apiPath(template: string, params: Record<string, string> = {}, query: Query = {}): string {
  const path = template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`apiPath: no value for {${name}} in ${template}`);
    return encodeURIComponent(value);
  });
  const search = new URLSearchParams();
  for (const [key, value] of query instanceof URLSearchParams ? query.entries() : Object.entries(query)) {
    if (value === undefined || value === null) continue;
    for (const one of Array.isArray(value) ? value : [value]) search.append(key, String(one));
  }
  const text = search.toString();
  return text === "" ? path : `${path}?${text}`;
}

/** The GET routes that answer a page of a cursor-paged list. */
export type PagedPath = { [P in PathOf<"GET">]: AnswerOf<`GET ${P}`> extends { items: unknown[]; nextCursor: string | null } ? P : never }[PathOf<"GET">];
/** One item of such a page. */
export type PageItem<P extends PagedPath> = AnswerOf<`GET ${P}`> extends { items: (infer T)[] } ? T : never;

/** The URL of a GET route the browser fetches itself (an EventSource, a download link). */
export function apiUrl<P extends PathOf<"GET">>(path: P, ...[options]: Options<P>): string {
  const { params, query } = (options ?? {}) as Common & { params?: Record<string, string> };
  return `/api/v1${apiPath(path, params, query)}`;
}

function caller<M extends Method>(method: M) {
  return <P extends PathOf<M>>(path: P, ...[options]: Options<P>): Promise<AnswerOf<`${M} ${P}`>> => {
    const { params, query, body } = (options ?? {}) as Common & { params?: Record<string, string> };
    return apiRequest(method, apiPath(path, params, query), body);
  };
}

export const api = {
  get: caller("GET"),
  post: caller("POST"),
  put: caller("PUT"),
  patch: caller("PATCH"),
  delete: caller("DELETE"),
};
