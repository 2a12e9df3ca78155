// The one Docker error converter: every engine call of Berth goes through call(), and a failure
// becomes a domain error here, at the boundary (404 → NOT_FOUND, 409 and 503 (not a swarm manager) → CONFLICT, anything else a
// 500). Each message carries the engine's reason, as the peer's answers do, with join tokens cut and
// the password of any URL in it masked; the 500's full detail goes to the log too. No other file
// turns engine errors into domain errors.
import { BerthError, conflict, notFound, redactOutput, SECRET_MASK, type Logger } from '@berth/core';

interface EngineError {
  statusCode?: number;
  json?: { message?: string };
  reason?: string;
  message?: string;
  code?: string;
}

/** The engine's reason as an answer may carry it: join tokens cut, a URL's password masked (a registry's, a git remote's). */
function redacted(detail: string): string {
  return redactOutput(detail).replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^/\s:@]+:)[^@\s/]+@/gi, `$1${SECRET_MASK}@`);
}

/** The domain error for an engine failure while trying to `what` (a BerthError passes unchanged). */
export function engineError(what: string, e: unknown, log?: Logger): BerthError {
  if (e instanceof BerthError) return e;
  const err = e as EngineError;
  const detail = redacted(err.json?.message ?? err.reason ?? err.message ?? String(e));
  if (err.statusCode === 404) return notFound(`Docker: cannot ${what}: ${detail}`);
  if (err.statusCode === 409) return conflict(`Docker: cannot ${what}: ${detail}`);
  // Unavailable: a swarm operation on an engine that is not a manager (or not in a swarm); the engine's reason is the answer.
  if (err.statusCode === 503) return conflict(`Docker: cannot ${what}: ${detail}`);
  const error = new BerthError('INTERNAL_SERVER_ERROR', `Docker: cannot ${what}: ${detail}`);
  if (!log) return Object.assign(error, { cause: detail });
  log.error({ err: { statusCode: err.statusCode, code: err.code, message: detail } }, `Docker: cannot ${what}`);
  return error;
}

/** Runs an engine call, converting its failure. */
export async function engineCall<T>(log: Logger | undefined, what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    throw engineError(what, e, log);
  }
}
