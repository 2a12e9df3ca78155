// Input checking for every procedure: defaults, unknown fields dropped, every violated
// constraint reported once with the field it concerns.
import type { TSchema } from 'typebox';
import { Value, UnionPrioritySort } from 'typebox/value';
import { Compile } from 'typebox/compile';
import { Settings } from 'typebox/system';
import { badRequest, type Issue } from './errors.ts';
import { checkingEmptyAsUnset, type FieldPath } from './empty-strings.ts';

interface Checker {
  Check(value: unknown): boolean;
  Errors(value: unknown): Iterable<{ keyword: string; instancePath: string; message: string; params: Record<string, unknown> }>;
}
const compiled = new WeakMap<TSchema, Checker>();
const checkerOf = (schema: TSchema): Checker => {
  let c = compiled.get(schema);
  if (!c) compiled.set(schema, (c = Compile(schema) as Checker));
  return c;
};

// Value.Clean first reorders every union of the schema from narrowest to broadest
// (UnionPrioritySort), on each call: for an input of a hundred optional fields that was most of a
// request's CPU. The order depends on the schema alone, so it is computed once per schema and
// Clean is given the sorted schema with its own sorting off: the same result, without the cost.
const sortedSchemas = new WeakMap<TSchema, TSchema>();
function clean(schema: TSchema, value: unknown): unknown {
  const settings = Settings.Get();
  if (!settings.unionPrioritySort) return Value.Clean(schema, value);
  let sorted = sortedSchemas.get(schema);
  if (!sorted) sortedSchemas.set(schema, (sorted = UnionPrioritySort(schema)));
  Settings.Set({ unionPrioritySort: false });
  try {
    return Value.Clean(sorted, value);
  } finally {
    Settings.Set({ unionPrioritySort: true });
  }
}

// Value.Default walks every property of the schema, cloning and checking each union's branches,
// even where nothing has a default: most inputs (every update's) have none, and then the walk
// changes nothing. Whether a schema has one anywhere is found once.
const defaulted = new WeakMap<TSchema, boolean>();
/** Whether `default` is a key anywhere in the schema (a property named so counts too: it errs on the side of the walk). */
function hasDefault(schema: unknown, seen = new Set<object>()): boolean {
  if (typeof schema !== 'object' || schema === null || seen.has(schema)) return false;
  seen.add(schema);
  return Object.hasOwn(schema, 'default') || Object.getOwnPropertyNames(schema).some(k => hasDefault((schema as Record<string, unknown>)[k], seen));
}
function withDefaults(schema: TSchema, value: unknown): unknown {
  let has = defaulted.get(schema);
  if (has === undefined) defaulted.set(schema, (has = hasDefault(schema)));
  return has ? Value.Default(schema, value) : value;
}

/**
 * Turns raw input into the procedure's typed input or throws BAD_REQUEST.
 * `coerce` is for query strings, where every value arrives as text. In `emptyAsUnset` (the
 * operation's fields of core/src/empty-string-fields.json) "" passes as "not set" and is kept.
 */
export function parseInput<T>(schema: TSchema, raw: unknown, coerce: boolean, emptyAsUnset: readonly FieldPath[] = []): T {
  let value: unknown = raw ?? {};
  if (coerce) value = Value.Convert(schema, value);
  value = withDefaults(schema, Value.Clone(value));
  value = clean(schema, value);
  const checker = checkerOf(schema);
  checkingEmptyAsUnset(value, emptyAsUnset, v => {
    if (!checker.Check(v)) throw badRequest('Invalid input data', toIssues(checker.Errors(v)));
  });
  const unstorable = unstorableValues(value);
  if (unstorable.length) throw badRequest('Invalid input data', unstorable);
  return value as T;
}

/** Largest magnitude a number of the input may have: every integer stays exact, and no column or LIMIT overflows silently. */
const NUMBER_LIMIT = Number.MAX_SAFE_INTEGER;
// A NUL, or half of a UTF-16 surrogate pair: PostgreSQL refuses both in text and in JSON.
const UNSTORABLE_TEXT = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const UNSTORABLE_TEXT_ALL = new RegExp(UNSTORABLE_TEXT.source, 'g');

/** False when PostgreSQL cannot store the string as text (a NUL, an unpaired surrogate): what a raw route refuses before it queries with it. */
export const isStorable = (text: string): boolean => !UNSTORABLE_TEXT.test(text);

/** The string with each NUL and unpaired surrogate read as U+FFFD, as a UTF-8 decoder reads an invalid byte: storable, and equal to no name that was. */
export const storable = (text: string): string => text.replace(UNSTORABLE_TEXT_ALL, '\ufffd');

/**
 * What a schema cannot say but the database refuses: NUL characters and unpaired surrogates in any
 * string (values and object keys, at any depth) and numbers too large to be exact.
 */
export function unstorableValues(value: unknown): Issue[] {
  const issues: Issue[] = [];
  const visit = (v: unknown, path: (string | number)[]) => {
    if (issues.length >= 10) return;
    const field = path.length ? path.join('.') : 'input';
    if (typeof v === 'string') {
      if (UNSTORABLE_TEXT.test(v)) issues.push({ path, message: `${field}: must not contain NUL characters or unpaired UTF-16 surrogates` });
    } else if (typeof v === 'number') {
      if (!Number.isFinite(v) || Math.abs(v) > NUMBER_LIMIT) issues.push({ path, message: `${field}: must be between -${NUMBER_LIMIT} and ${NUMBER_LIMIT}` });
    } else if (Array.isArray(v)) {
      v.forEach((item, i) => visit(item, [...path, i]));
    } else if (v && typeof v === 'object') {
      for (const [k, item] of Object.entries(v)) {
        if (UNSTORABLE_TEXT.test(k)) issues.push({ path: [...path, k], message: `${field}: keys must not contain NUL characters or unpaired UTF-16 surrogates` });
        else visit(item, [...path, k]);
      }
    }
  };
  visit(value, []);
  return issues;
}

/** True when a reply matches the declared output schema (used when checkResponses is on). */
export function outputErrors(schema: TSchema, value: unknown): Issue[] {
  const checker = checkerOf(schema);
  return checker.Check(value) ? [] : toIssues(checker.Errors(value)).slice(0, 10);
}

function toIssues(errors: Checker['Errors'] extends (v: unknown) => infer R ? R : never): Issue[] {
  const byPath = new Map<string, { path: (string | number)[]; messages: string[]; anyOf: boolean }>();
  const add = (path: (string | number)[], message: string, anyOf = false) => {
    const key = path.join('.');
    const entry = byPath.get(key) ?? { path, messages: [], anyOf: false };
    entry.messages.push(message);
    entry.anyOf ||= anyOf;
    byPath.set(key, entry);
  };
  for (const e of errors) {
    const path = e.instancePath
      .split('/')
      .slice(1)
      .map(seg => (/^\d+$/.test(seg) ? Number(seg) : seg.replace(/~1/g, '/').replace(/~0/g, '~')));
    if (e.keyword === 'required') {
      for (const prop of (e.params.requiredProperties as string[] | undefined) ?? []) add([...path, prop], 'Required');
    } else if (e.keyword === 'anyOf') {
      add(path, '', true);
    } else if (e.keyword === 'enum' && Array.isArray(e.params.allowedValues)) {
      // Lists of allowed values come from registries (build types, source types...): say which.
      add(path, `must be one of: ${(e.params.allowedValues as unknown[]).map(v => JSON.stringify(v)).join(', ')}`);
    } else {
      add(path, e.message);
    }
  }
  return [...byPath.values()].map(({ path, messages, anyOf }) => {
    const field = path.length ? path.join('.') : 'input';
    const own = messages.filter(Boolean);
    // The branches of a union (e.g. string | null) each fail; say what would be accepted.
    const message = anyOf ? `must be one of: ${own.map(m => m.replace(/^must (be (one of: )?)?/, '')).join(' | ')}` : own.join('; ');
    return { path, message: `${field}: ${message}` };
  });
}
