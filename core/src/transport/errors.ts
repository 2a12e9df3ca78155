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
  INTERNAL_SERVER_ERROR: -32603,
};

export function toBerthError(err: unknown): BerthError {
  if (err instanceof BerthError) return err;
  const e = err as FastifyError & { name?: string };
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
  if (typeof e?.statusCode === 'number' && e.statusCode >= 400 && e.statusCode < 500) return new BerthError('BAD_REQUEST', e.message);
  return new BerthError('INTERNAL_SERVER_ERROR');
}

export const isTrpc = (url: string) => url.startsWith('/api/trpc/');

export function errorBody(err: BerthError, trpcPath?: string) {
  const body = { code: err.code, message: err.message, issues: err.issues };
  if (trpcPath === undefined) return body;
  return {
    error: { json: { message: err.message, code: rpcCodes[err.code], data: { code: err.code, httpStatus: errorStatus[err.code], path: trpcPath, issues: err.issues } } },
    ...body,
  };
}

export function handleError(err: unknown, request: FastifyRequest, reply: FastifyReply) {
  const mapped = toBerthError(err);
  if (mapped.code === 'INTERNAL_SERVER_ERROR') request.log.error({ err }, 'unexpected error');
  const trpcPath = isTrpc(request.url) ? request.url.slice('/api/trpc/'.length).split('?')[0] : undefined;
  reply.status(errorStatus[mapped.code]).header('content-type', 'application/json; charset=utf-8').send(errorBody(mapped, trpcPath));
}
