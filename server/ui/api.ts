/**
 * The transport under the typed client (client.ts): same-origin fetch of
 * /api/v1, JSON both ways, and one error type carrying the API's
 * {error:{code,message,details}} so every page can show what the server said. Writes carry the session's
 * CSRF token once the session has told us one.
 */
export interface ApiErrorBody {
  code: string;
  message: string;
  details: unknown[];
}

export class ApiError extends Error implements ApiErrorBody {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: unknown[] = [],
  ) {
    super(message);
  }
}

let csrfToken: string | null = null;

/** Set from the session answer; cleared on sign-out. */
export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

const WRITES = new Set(["POST", "PUT", "PATCH", "DELETE"]);

export async function apiRequest<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (WRITES.has(method) && csrfToken !== null) headers["X-CSRF-Token"] = csrfToken;
  let res: Response;
  try {
    res = await fetch(`/api/v1${path}`, {
      method,
      headers,
      credentials: "same-origin",
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    throw new ApiError(0, "network_error", `The server could not be reached (${(error as Error).message}).`);
  }
  if (res.status === 204) return undefined as T;
  const parsed = await res.json().catch(() => undefined);
  if (res.ok) return parsed as T;
  throw toApiError(res, parsed);
}

/** The API's own error when it sent one; otherwise a stand-in with the same shape. */
function toApiError(res: Response, parsed: unknown): ApiError {
  const error = (parsed as { error?: Partial<ApiErrorBody> } | undefined)?.error;
  if (error && typeof error.code === "string" && typeof error.message === "string") {
    return new ApiError(res.status, error.code, error.message, Array.isArray(error.details) ? error.details : []);
  }
  return new ApiError(res.status, `http_${res.status}`, `The server answered ${res.status} ${res.statusText}.`.replace(" .", "."));
}
