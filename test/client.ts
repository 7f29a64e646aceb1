/** The one REST client helper the tests share: fetch under /api/v1 with a Bearer token and an optional JSON body. */
export function api(
  base: string,
  token: string | null,
  path: string,
  init: RequestInit & { json?: unknown } = {},
): Promise<Response> {
  const { json, ...rest } = init;
  const headers = new Headers(rest.headers);
  if (token !== null) headers.set("Authorization", `Bearer ${token}`);
  let body = rest.body;
  if (json !== undefined) {
    headers.set("Content-Type", "application/json");
    body = JSON.stringify(json);
  }
  return fetch(`${base}/api/v1${path}`, { ...rest, headers, body });
}

/** A JSON caller bound to one server and token, for tests that talk to server processes: throws on any non-2xx answer, naming it. */
export function jsonCaller(base: string, token: string) {
  return async <T = Record<string, unknown>>(path: string, method = "GET", json?: unknown): Promise<T> => {
    const res = await api(base, token, path, { method, json });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path} on ${base}: ${res.status} ${text}`);
    return (text === "" ? undefined : JSON.parse(text)) as T;
  };
}
