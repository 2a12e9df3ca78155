import { randomBytes } from 'node:crypto';

/** A random suffix for randomizeCompose when none is given: 8 hex characters (the peer's). */
export function randomSuffix(): string {
  return randomBytes(4).toString('hex');
}
