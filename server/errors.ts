/**
 * Typed errors that domain code throws. Only server/http/ turns them into the
 * JSON error shape and an HTTP status; everything else just throws.
 */

/**
 * One problem with one field of an input, named by its dotted path; `id` and
 * `name` when it names a record, such as each candidate for an ambiguous name.
 */
export interface ErrorDetail {
  path: string;
  message: string;
  id?: string;
  name?: string;
}

export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: ErrorDetail[] = [],
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class ValidationError extends AppError {
  constructor(message: string, details: ErrorDetail[] = []) {
    super(400, "validation_failed", message, details);
  }
}

export class UnauthenticatedError extends AppError {
  constructor(message = "A valid Bearer token is required.") {
    super(401, "unauthenticated", message, [], { "WWW-Authenticate": 'Bearer realm="svc"' });
  }
}

export class ForbiddenError extends AppError {
  constructor(
    readonly scope: string,
    message = `This call needs the scope '${scope}', which the credential does not have.`,
  ) {
    super(403, "forbidden", message);
  }
}

export class NotFoundError extends AppError {
  constructor(what: string, id?: string) {
    super(404, "not_found", id === undefined ? `${what} not found.` : `${what} '${id}' not found.`);
  }
}

export class ConflictError extends AppError {
  constructor(message: string, code = "conflict", details: ErrorDetail[] = []) {
    super(409, code, message, details);
  }
}

/**
 * Refused before the body is read, so the connection is closed: the unread
 * rest of the upload would otherwise hold it open (and a graceful stop with it).
 */
export class PayloadTooLargeError extends AppError {
  constructor(limit: number) {
    super(413, "payload_too_large", `The request body is larger than the limit of ${limit} bytes.`, [], { Connection: "close" });
  }
}

export class UnsupportedMediaTypeError extends AppError {
  constructor(expected: string) {
    super(415, "unsupported_media_type", `The request body must be sent as ${expected}.`);
  }
}

/** 429 with Retry-After: this credential or address has used up its rate; wait, then retry. */
export class RateLimitedError extends AppError {
  constructor(message: string, retryAfterSeconds: number) {
    super(429, "rate_limited", message, [], { "Retry-After": String(retryAfterSeconds) });
  }
}

/** 503 with Retry-After: the server cannot take this now (storage down, overload). */
export class UnavailableError extends AppError {
  constructor(message: string, retryAfterSeconds = 5, code = "unavailable") {
    super(503, code, message, [], { "Retry-After": String(retryAfterSeconds) });
  }
}

/**
 * 503 storage_unavailable: the database cannot be reached (or is not reached
 * yet at start-up). Nothing was stored by the call that got it, unless the
 * message says the outcome is unknown.
 */
export class StorageUnavailableError extends UnavailableError {
  constructor(message: string, retryAfterSeconds = 5) {
    super(message, retryAfterSeconds, "storage_unavailable");
  }
}

/**
 * 507 storage_full with Retry-After: the disk under the embedded store or its
 * git repository is full. Nothing was stored by the call that got it; reads
 * still work, and writes work again once space is freed, without a restart.
 */
export class InsufficientStorageError extends AppError {
  constructor(what: string, retryAfterSeconds = 30) {
    super(507, "storage_full", `The disk holding ${what} is full, so nothing was stored; free space there and retry.`, [], {
      "Retry-After": String(retryAfterSeconds),
    });
  }
}
