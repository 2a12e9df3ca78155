// The closed set of domain errors. Services and providers throw these; only the HTTP
// transport turns them into status codes (see transport/errors.ts).

export type ErrorCode =
  'BAD_REQUEST' | 'UNAUTHORIZED' | 'FORBIDDEN' | 'NOT_FOUND' | 'CONFLICT' | 'PAYLOAD_TOO_LARGE' | 'UNSUPPORTED_MEDIA_TYPE' | 'TOO_MANY_REQUESTS' | 'INTERNAL_SERVER_ERROR' | 'SERVICE_UNAVAILABLE';

export interface Issue {
  /** Where the problem is, as a list of keys from the input root (zod-style). */
  path: (string | number)[];
  /** What is wrong, naming the field. */
  message: string;
}

export const errorStatus: Record<ErrorCode, number> = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  TOO_MANY_REQUESTS: 429,
  INTERNAL_SERVER_ERROR: 500,
  SERVICE_UNAVAILABLE: 503,
};

export const defaultMessage: Record<ErrorCode, string> = {
  BAD_REQUEST: 'Invalid input data',
  UNAUTHORIZED: 'Authorization not provided',
  FORBIDDEN: 'Insufficient access',
  NOT_FOUND: 'Not found',
  CONFLICT: 'Conflict',
  PAYLOAD_TOO_LARGE: 'Request body is too large',
  UNSUPPORTED_MEDIA_TYPE: 'Unsupported content type',
  TOO_MANY_REQUESTS: 'Too many attempts',
  INTERNAL_SERVER_ERROR: 'Internal server error',
  SERVICE_UNAVAILABLE: 'A service Berth depends on is not available',
};

export class BerthError extends Error {
  readonly code: ErrorCode;
  readonly issues: Issue[];
  /** TOO_MANY_REQUESTS: when to try again (the Retry-After header). */
  readonly retryAfterSeconds?: number;
  constructor(code: ErrorCode, message?: string, issues: Issue[] = [], extra: { retryAfterSeconds?: number } = {}) {
    super(message ?? defaultMessage[code]);
    this.name = 'BerthError';
    this.code = code;
    this.issues = issues;
    if (extra.retryAfterSeconds !== undefined) this.retryAfterSeconds = extra.retryAfterSeconds;
  }
}

export const badRequest = (message?: string, issues: Issue[] = []) => new BerthError('BAD_REQUEST', message, issues);
/** A single-field input problem that a schema cannot express (e.g. "email already taken" is a conflict, not this). */
export const invalidField = (field: string, message: string) => new BerthError('BAD_REQUEST', 'Invalid input data', [{ path: field.split('.'), message: `${field}: ${message}` }]);
/** Runs a parse whose thrown message is a user's answer (an address, a key), as a 400 that names the field. */
export function parseField<T>(field: string, parse: () => T): T {
  try {
    return parse();
  } catch (e) {
    throw invalidField(field, (e as Error).message);
  }
}
export const unauthorized = (message?: string) => new BerthError('UNAUTHORIZED', message);
export const forbidden = (message?: string) => new BerthError('FORBIDDEN', message);
export const notFound = (what?: string) => new BerthError('NOT_FOUND', what ? `${what} not found` : undefined);
export const conflict = (message: string) => new BerthError('CONFLICT', message);
/** Something Berth runs or talks to (the proxy, an engine) cannot do its part now: the request was fine. */
export const unavailable = (message: string) => new BerthError('SERVICE_UNAVAILABLE', message);

export const isBerthError = (e: unknown): e is BerthError => e instanceof BerthError;
