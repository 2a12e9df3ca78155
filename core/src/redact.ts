// The one filter every command output Berth records or answers goes through (setup steps, the
// doctor, deployment logs): swarm join tokens are cut (`SWMTKN-1-…` → `SWMTKN-<redacted>`, whoever
// printed them), and the values of the secrets known for the record or call are masked. A value
// taken from a record's secret-typed field (password, token, key, secret) is masked only when it
// is 8 characters or longer, so that `true` or `root` are not masked everywhere they appear; a
// value registered explicitly as a secret (a deployer's env values) from 3 characters on.
import { storable } from './validation.ts';

/** What a masked secret value becomes. */
export const SECRET_MASK = '******';
/** What a swarm join token becomes. */
export const JOIN_TOKEN_MASK = 'SWMTKN-<redacted>';
/** A secret-typed field's value shorter than this is left as it is. */
export const MIN_SECRET_FIELD_LENGTH = 8;
/** An explicitly registered secret shorter than this is left as it is ("a", "on" hide nothing). */
export const MIN_REGISTERED_SECRET_LENGTH = 3;

// Docker's join tokens: SWMTKN-1-<root CA digest>-<secret>, base36 parts; cut whole, whatever follows
// the prefix (a masked one is left as it is: text filtered twice stays the same).
const JOIN_TOKEN = /SWMTKN-(?!<redacted>)[0-9A-Za-z-]*/g;
// Field names that hold secrets: …password, …passwd, …secret, …token, …key (not publicKey), authorization.
const SECRET_FIELD = /(password|passwd|secret|token|key|authorization)$/i;
const NOT_SECRET_FIELD = /^public_?key$|publickey$/i;

/** Whether a field of that name holds a secret (databasePassword, webhookSecret, refreshToken, privateKey, apiKey…). */
export function isSecretField(name: string): boolean {
  return SECRET_FIELD.test(name) && !NOT_SECRET_FIELD.test(name);
}

/** The values of a record's secret-typed fields (nested objects and arrays too), 8 characters or longer. */
export function secretFieldValues(record: unknown, depth = 5): string[] {
  const out: string[] = [];
  const walk = (value: unknown, secret: boolean, level: number) => {
    if (typeof value === 'string') {
      if (secret && value.length >= MIN_SECRET_FIELD_LENGTH) out.push(value);
    } else if (value && typeof value === 'object' && level < depth) {
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) walk(v, secret || (!Array.isArray(value) && isSecretField(k)), level + 1);
    }
  };
  walk(record, false, 0);
  return out;
}

/** Masks join tokens and the secrets added to it; one per record or call. */
export class OutputFilter {
  #secrets: string[] = [];

  /** @param records records (or call inputs) whose secret-typed fields are masked */
  constructor(...records: unknown[]) {
    for (const r of records) this.addFields(r);
  }

  /** Masks `secret` from now on (ignored when shorter than minLength). */
  add(secret: string | null | undefined, minLength = MIN_SECRET_FIELD_LENGTH): this {
    if (typeof secret !== 'string' || secret.length < minLength || this.#secrets.includes(secret)) return this;
    // The longest first, so a secret containing another is masked whole.
    this.#secrets = [...this.#secrets, secret].sort((a, b) => b.length - a.length);
    return this;
  }

  /** Masks the values of the record's secret-typed fields (8 characters or longer). */
  addFields(record: unknown): this {
    for (const value of secretFieldValues(record)) this.add(value);
    return this;
  }

  /** The text with every join token and every added secret masked. */
  apply(text: string): string {
    let out = String(text).replace(JOIN_TOKEN, JOIN_TOKEN_MASK);
    for (const s of this.#secrets) out = out.split(s).join(SECRET_MASK);
    return out;
  }
}

/** One text through a fresh filter: join tokens, and the secret-typed fields of `records`. */
export function redactOutput(text: string, ...records: unknown[]): string {
  return new OutputFilter(...records).apply(text);
}

// Input fields whose values are secrets though their names do not say so: env files and build arguments.
const SECRET_TEXT_FIELD = /(^env|Env|^buildArgs|BuildArgs|^buildSecrets|BuildSecrets)$/;
/** The longest text an input keeps in a record of it (the audit log): longer ones are cut. */
export const MAX_RECORDED_TEXT = 2000;

/**
 * A call's input as records of it keep it (the audit log): the value of every secret-typed field
 * (password, token, key, secret…) and of env and build-argument texts becomes SECRET_MASK, whatever
 * its length; long texts are cut, deep nesting and long lists stop. Text PostgreSQL cannot store (a
 * NUL, an unpaired surrogate, one a cut made) reads as U+FFFD, so the record of a call refused for
 * such a value is written too.
 */
export function redactInput(value: unknown, depth = 6): unknown {
  const walk = (v: unknown, secret: boolean, level: number): unknown => {
    if (v === null || v === undefined || typeof v === 'boolean' || typeof v === 'number') return v ?? null;
    if (typeof v === 'string') return secret && v !== '' ? SECRET_MASK : storable(v.length > MAX_RECORDED_TEXT ? `${v.slice(0, MAX_RECORDED_TEXT)}…` : v);
    if (typeof v !== 'object' || level >= depth) return secret ? SECRET_MASK : '…';
    if (Array.isArray(v)) return v.slice(0, 100).map(item => walk(item, secret, level + 1));
    return Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, item]) => [storable(k), walk(item, secret || isSecretField(k) || SECRET_TEXT_FIELD.test(k), level + 1)]));
  };
  return walk(value, false, 0);
}
