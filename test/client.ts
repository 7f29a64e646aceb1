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
