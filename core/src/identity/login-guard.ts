// Guessing passwords and two-factor codes: failures are counted per account and per client
// address, and past a few of them every further attempt waits, twice as long each time (up to
// 15 minutes), answering 429 with Retry-After. A success clears the account's count (not the
// address's: one right password must not reopen an address that guesses many accounts).
// Counts live in this process: a restart forgets them, as it forgets nothing else an attacker
// could not redo in seconds.
import { BerthError } from '../errors.ts';
import { systemClock, type Clock } from '../clock.ts';

interface Count {
  failures: number;
  /** No attempt is taken before this time (ms). */
  blockedUntil: number;
  /** When the count is forgotten (ms). */
  expires: number;
}

export interface GuardLimits {
  /** Failures allowed before attempts wait. */
  free: number;
  /** Seconds of the first wait; each further failure doubles it. */
  baseSeconds: number;
}

const MAX_WAIT_SECONDS = 15 * 60;
const FORGET_MS = 60 * 60 * 1000;

export const LOGIN_LIMITS = { account: { free: 5, baseSeconds: 1 }, address: { free: 50, baseSeconds: 1 }, twoFactor: { free: 5, baseSeconds: 2 } } satisfies Record<string, GuardLimits>;

export class LoginGuard {
  readonly #counts = new Map<string, Count>();
  readonly #clock: Clock;

  constructor(clock: Clock = systemClock) {
    this.#clock = clock;
  }

  /** Throws 429 when any of the keys must still wait. */
  check(keys: string[]): void {
    const now = this.#clock.now();
    let wait = 0;
    for (const key of keys) {
      const c = this.#counts.get(key);
      if (c && c.expires > now && c.blockedUntil > now) wait = Math.max(wait, c.blockedUntil - now);
    }
    if (wait > 0) throw tooManyAttempts(Math.ceil(wait / 1000));
  }

  /** Counts a failure against each key. */
  fail(keys: [string, GuardLimits][]): void {
    const now = this.#clock.now();
    for (const [key, limits] of keys) {
      const c = this.#counts.get(key);
      const failures = (c && c.expires > now ? c.failures : 0) + 1;
      const over = failures - limits.free;
      const waitSeconds = over > 0 ? Math.min(MAX_WAIT_SECONDS, limits.baseSeconds * 2 ** (over - 1)) : 0;
      this.#counts.set(key, { failures, blockedUntil: now + waitSeconds * 1000, expires: now + FORGET_MS });
    }
    if (this.#counts.size > 100_000) this.#sweep(now);
  }

  /** Forgets a key's failures (a success). */
  clear(key: string): void {
    this.#counts.delete(key);
  }

  #sweep(now: number): void {
    for (const [k, c] of this.#counts) if (c.expires <= now) this.#counts.delete(k);
  }
}

export const tooManyAttempts = (retryAfterSeconds: number) => new BerthError('TOO_MANY_REQUESTS', `Too many failed attempts: try again in ${retryAfterSeconds} s`, [], { retryAfterSeconds });
