/** The one REST client helper the tests share: fetch under /api/v1 with a Bearer token and an optional JSON body. */
export function api(base: string, token: string | null, path: string, init: RequestInit & { json?: unknown } = {}): Promise<Response> {
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

/** One block of a server-sent event stream: its event name and data line, when it has them, and the block as sent (a comment has neither). */
export interface SseBlock {
  event?: string;
  data?: string;
  text: string;
}

/**
 * The blocks of an event stream as they arrive, until the reader ends (or is cancelled).
 * Only `read` is asked for: a fetch body's reader is typed by undici, not by Bun's streams.
 */
export async function* sseBlocks(reader: Pick<ReadableStreamDefaultReader<Uint8Array>, "read">): AsyncGenerator<SseBlock> {
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end: number;
    while ((end = buffer.indexOf("\n\n")) !== -1) {
      const text = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      yield { event: /^event: (.*)$/m.exec(text)?.[1], data: /^data: (.*)$/m.exec(text)?.[1], text };
    }
  }
}
