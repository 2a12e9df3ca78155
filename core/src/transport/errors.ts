// The one place where errors become HTTP: domain errors map to their status, Fastify's
// body errors to 400/413/415, ORM constraint violations to 409, anything else to a 500
// whose details go only to the log.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { BerthError, errorStatus, type ErrorCode } from '../errors.ts';

const rpcCodes: Record<ErrorCode, number> = {
  BAD_REQUEST: -32600,
  UNAUTHORIZED: -32001,
  FORBIDDEN: -32003,
  NOT_FOUND: -32004,
  CONFLICT: -32009,
  PAYLOAD_TOO_LARGE: -32013,
  UNSUPPORTED_MEDIA_TYPE: -32015,
  TOO_MANY_REQUESTS: -32029,
  INTERNAL_SERVER_ERROR: -32603,
  SERVICE_UNAVAILABLE: -32053,
};

/**
 * A value the database refused (SQLSTATE class 22, data exception, or 54000, a value too large for
 * an index): the caller's input, so a 400. PostgreSQL does not say which column; the field named is
 * the one of the request's input that breaks the limit the error states.
 */
export function dataError(e: { code?: string; message?: string }, input: unknown): BerthError | undefined {
  if (typeof e?.code !== 'string' || !(e.code.startsWith('22') || e.code === '54000')) return undefined;
  const leaves: { path: (string | number)[]; value: unknown }[] = [];
  const visit = (v: unknown, path: (string | number)[]) => {
    if (Array.isArray(v)) v.forEach((item, i) => visit(item, [...path, i]));
    else if (v && typeof v === 'object') for (const [k, item] of Object.entries(v)) visit(item, [...path, k]);
    else leaves.push({ path, value: v });
  };
  visit(input, []);
  const length = /character varying\((\d+)\)/.exec(e.message ?? '')?.[1];
  let culprits: typeof leaves = [];
  if (length) culprits = leaves.filter(l => typeof l.value === 'string' && l.value.length > Number(length));
  else if (e.code === '22003') culprits = leaves.filter(l => typeof l.value === 'number' && Math.abs(l.value) > 2 ** 31 - 1);
  else if (e.code === '54000') culprits = leaves.filter(l => typeof l.value === 'string' && l.value.length > 2000);
  const what = length ? `must be at most ${length} characters` : e.code === '22003' ? 'is out of range' : 'cannot be stored';
  const issues = culprits.length ? culprits.map(({ path }) => ({ path, message: `${path.join('.')}: ${what}` })) : [{ path: [], message: `input: a value ${what}` }];
  return new BerthError('BAD_REQUEST', 'Invalid input data', issues);
}

export function toBerthError(err: unknown): BerthError {
  if (err instanceof BerthError) return err;
  const e = err as FastifyError & { name?: string };
  const refused = dataError(e, undefined);
  if (refused) return refused;
  switch (e?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new BerthError('PAYLOAD_TOO_LARGE');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new BerthError('UNSUPPORTED_MEDIA_TYPE', 'Send JSON bodies with Content-Type: application/json');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new BerthError('BAD_REQUEST', 'Malformed request body');
  }
  if (e?.name === 'UniqueConstraintViolationException') return new BerthError('CONFLICT', 'A record with the same unique value already exists');
  if (e?.name === 'ForeignKeyConstraintViolationException') return new BerthError('NOT_FOUND', 'A referenced record does not exist');
  // A multipart form past its limits (files, fields, parts): 413 as a body too large is.
  if (e?.statusCode === 413) return new BerthError('PAYLOAD_TOO_LARGE', e.message);
  if (typeof e?.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) return new BerthError('BAD_REQUEST', e.message);
  return new BerthError('INTERNAL_SERVER_ERROR');
}

export const isTrpc = (url: string) => url.startsWith('/api/trpc/');

export function errorBody(err: BerthError, trpcPath?: string) {
  const body = { code: err.code, message: err.message, issues: err.issues };
  if (trpcPath === undefined) return body;
  return { error: { json: { message: err.message, code: rpcCodes[err.code], data: { code: err.code, httpStatus: errorStatus[err.code], path: trpcPath, issues: err.issues } } }, ...body };
}

export function handleError(err: unknown, request: FastifyRequest, reply: FastifyReply) {
  const mapped = toBerthError(err);
  if (mapped.code === 'INTERNAL_SERVER_ERROR') request.log.error({ err }, 'unexpected error');
  const trpcPath = isTrpc(request.url) ? request.url.slice('/api/trpc/'.length).split('?')[0] : undefined;
  if (mapped.retryAfterSeconds !== undefined) reply.header('retry-after', String(mapped.retryAfterSeconds));
  reply.status(errorStatus[mapped.code]).header('content-type', 'application/json; charset=utf-8').send(errorBody(mapped, trpcPath));
}
